package restamp

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/health"
)

// The judge lists a reader's pods live (the hook caches no pod), a page at
// a time: a page is decoded whole, and a pod is as large as its workload's
// template makes it, so the page bounds what one judgement holds at once.
const (
	podPageSize = 20
	// maxJudgedPods bounds the pods one judgement lists. A reader whose
	// selector matches more is judged by the first of them (the
	// apiserver's order, by name) and by its status, which counts all of
	// its replicas; a pod past the bound that fails shows there, later.
	maxJudgedPods = 400
)

// podsOfRevision lists, page by page and at most maxJudgedPods, the pods
// of namespace that sel matches, and keeps those of obj's controller
// (health.Owned) that carry stamp, reduced to what the judge reads
// (health.SlimPod): the judge looks at the new revision's pods only. With
// no stamp there is no new revision to tell, and nothing is listed.
func podsOfRevision(ctx context.Context, live client.Reader, namespace string, sel labels.Selector, obj client.Object, stamp string) ([]corev1.Pod, error) {
	if stamp == "" {
		return nil, nil
	}
	var kept []corev1.Pod
	listed := 0
	cont := ""
	for listed < maxJudgedPods {
		var page corev1.PodList
		opts := []client.ListOption{client.InNamespace(namespace), client.MatchingLabelsSelector{Selector: sel},
			client.Limit(int64(min(podPageSize, maxJudgedPods-listed)))}
		if cont != "" {
			opts = append(opts, client.Continue(cont))
		}
		if err := live.List(ctx, &page, opts...); err != nil {
			return nil, fmt.Errorf("listing pods: %w", err)
		}
		listed += len(page.Items)
		for _, p := range health.Owned(obj, page.Items) {
			if p.Annotations[contract.ChecksumAnnotation] == stamp {
				kept = append(kept, health.SlimPod(&p))
			}
		}
		cont = page.Continue
		if cont == "" || len(page.Items) == 0 {
			break
		}
	}
	return kept, nil
}
