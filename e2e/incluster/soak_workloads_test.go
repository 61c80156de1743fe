//go:build e2e

package incluster

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/images"
	"github.com/confighash/confighash/internal/contract"
)

// The soak's shape: 20 workloads (the last two StatefulSets) of 8 pods,
// scaled up to 10 as it goes: 200 pods. Ten ConfigMaps, each read by two
// workloads; two Opaque Secrets, each read by a further two.
const (
	soakWorkloads    = 20
	soakStatefulSets = 2
	soakStartPods    = 8
	soakFinalPods    = 10
	soakConfigMaps   = 10
	soakSecrets      = 2
)

// soakReader is what one workload reads: a ConfigMap's key mode through
// env, a mounted file and a subPath file; and, for every fifth workload, a
// Secret's key token through env and a mounted file.
type soakReader struct {
	name, configMap, secret string
	statefulSet             bool
}

func soakReaders() []soakReader {
	rs := make([]soakReader, soakWorkloads)
	for i := range rs {
		rs[i] = soakReader{
			name:        fmt.Sprintf("w-%02d", i),
			configMap:   fmt.Sprintf("cm-%02d", i/2),
			statefulSet: i >= soakWorkloads-soakStatefulSets,
		}
		if i%5 == 4 {
			rs[i].secret = fmt.Sprintf("sec-%d", i/10)
		}
	}
	return rs
}

// soakSources are the ConfigMaps and Secrets the readers read, at content
// version 0: waves on for one ConfigMap in two and both Secrets, off for
// the others, so that a canary is re-stamped mid-rollout for another
// source's change now and then (the hook judges it on its new stamp).
func soakSources(ns string) []client.Object {
	off := map[string]string{contract.WavesAnnotation: contract.WavesOff}
	var out []client.Object
	for i := range soakConfigMaps {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("cm-%02d", i)}}
		if i%2 == 1 {
			cm.Annotations = off
		}
		cm.Data = map[string]string{"mode": soakValue(cm.Name, 0), "unread": "x"}
		out = append(out, cm)
	}
	for i := range soakSecrets {
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("sec-%d", i)}, Type: corev1.SecretTypeOpaque}
		s.Data = map[string][]byte{"token": []byte(soakValue(s.Name, 0))}
		out = append(out, s)
	}
	return out
}

// soakValue is source's content at change n: unique per source and change,
// so that a pod that read another source's or another change's content shows.
func soakValue(source string, n int) string { return fmt.Sprintf("%s-v%d", source, n) }

// object is the reader's Deployment or StatefulSet, of tiny pods.
func (r soakReader) object(ns string) client.Object {
	args := []string{"-env", "MODE", "-file", "/config/mode", "-file", "/sub/mode"}
	c := corev1.Container{
		Name: "app", Image: images.SampleApp().Ref, ImagePullPolicy: corev1.PullIfNotPresent,
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU: resource.MustParse("1m"), corev1.ResourceMemory: resource.MustParse("4Mi")}},
		Env: []corev1.EnvVar{{Name: "MODE", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: r.configMap}, Key: "mode"}}}},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "config", MountPath: "/config"},
			{Name: "config", MountPath: "/sub/mode", SubPath: "mode"},
		},
	}
	vols := []corev1.Volume{{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: r.configMap},
		Items:                []corev1.KeyToPath{{Key: "mode", Path: "mode"}}}}}}
	if r.secret != "" {
		c.Args = append(args, "-env", "TOKEN", "-file", "/secret/token")
		c.Env = append(c.Env, corev1.EnvVar{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: r.secret}, Key: "token"}}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "secret", MountPath: "/secret"})
		vols = append(vols, corev1.Volume{Name: "secret", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: r.secret, Items: []corev1.KeyToPath{{Key: "token", Path: "token"}}}}})
	} else {
		c.Args = args
	}
	spec := corev1.PodSpec{TerminationGracePeriodSeconds: ptr.To[int64](1), Containers: []corev1.Container{c}, Volumes: vols}
	if !r.statefulSet {
		d := deployment(ns, r.name, soakStartPods, spec)
		// No surge: the node's pod network holds 253 pods.
		d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: ptr.To(intstr.FromInt32(0)), MaxUnavailable: ptr.To(intstr.FromString("30%"))}}
		return d
	}
	labels := map[string]string{"app": r.name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: r.name},
		Spec: appsv1.StatefulSetSpec{
			Replicas:            ptr.To[int32](soakStartPods),
			Selector:            &metav1.LabelSelector{MatchLabels: labels},
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Template:            corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
}
