package health

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Owned keeps the pods that obj's controller made, of those its selector
// matched: selectors of two workloads may overlap, and two readers of the
// same sources carry the same stamp, so neither the selector nor the stamp
// alone tells one workload's pods from another's. A pod is obj's when its
// controller is obj itself (a StatefulSet's, a DaemonSet's) or a ReplicaSet
// named after it, NAME-HASH, as a Deployment's and an Argo Rollout's are
// (the hash has no "-", so web's ReplicaSets are not web-api's).
func Owned(obj client.Object, pods []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	prefix := obj.GetName() + "-"
	for _, p := range pods {
		c := metav1.GetControllerOf(&p)
		if c == nil {
			continue
		}
		if c.UID == obj.GetUID() ||
			(c.Kind == "ReplicaSet" && strings.HasPrefix(c.Name, prefix) && !strings.Contains(c.Name[len(prefix):], "-")) {
			out = append(out, p)
		}
	}
	return out
}
