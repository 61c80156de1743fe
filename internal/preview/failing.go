package preview

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/health"
	"github.com/confighash/confighash/internal/workload"
)

// maxFailingPods bounds the pods listed to tell whether one reader is
// failing, as the hook bounds its own look (a reader with more is told by
// the first of them and by its status).
const maxFailingPods = 400

// failingBefore is why obj is failing now (health.Before), the hook's
// test for a reader that is neither the change's canary nor evidence
// against it; "" when it is not, or cannot be told (its pods cannot be
// listed: the hook counts such a reader healthy too).
func failingBefore(ctx context.Context, c client.Reader, k workload.Kind, obj client.Object) string {
	t, ok := k.PodTemplate(obj)
	if !ok {
		return ""
	}
	in := health.Input{Kind: k, Object: obj, Stamp: t.Checksum()}
	v, failing, needPods := health.Before(in)
	if needPods && in.Stamp != "" {
		sel, ok, err := health.PodSelector(k, obj)
		if err != nil || !ok {
			return ""
		}
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(obj.GetNamespace()), client.MatchingLabelsSelector{Selector: sel},
			client.Limit(maxFailingPods)); err != nil {
			return ""
		}
		in.Pods = []corev1.Pod{}
		for _, p := range health.Owned(obj, pods.Items) {
			if p.Annotations[contract.ChecksumAnnotation] == in.Stamp {
				in.Pods = append(in.Pods, p)
			}
		}
		v, failing, _ = health.Before(in)
	}
	if !failing {
		return ""
	}
	return v.Reason
}
