package restamp

import (
	"context"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/health"
	"github.com/confighash/confighash/internal/workload"
)

// failingBefore says whether obj, a stale reader of a change in waves, was
// failing before the change reached it (health.Before: its progress
// deadline, or a pod of its current revision that cannot start or has
// exited). Such a reader is not the change's canary and its rollout is
// not judged: a failure that was there before the re-stamp says nothing of
// the config. Its status decides when it is rolled out; its pods are
// listed (live, paged, wave_pods.go) only when it is not. A reader whose
// pods cannot be read counts as healthy: judged as any.
func (r *reconciler) failingBefore(ctx context.Context, kind workload.Kind, obj client.Object) (health.Verdict, bool) {
	t, ok := kind.PodTemplate(obj)
	if !ok {
		return health.Verdict{}, false
	}
	in := health.Input{Kind: kind, Object: obj, Stamp: t.Checksum()}
	v, failing, needPods := health.Before(in)
	if !needPods || r.live == nil {
		return v, failing
	}
	sel, ok, err := health.PodSelector(kind, obj)
	if err != nil || !ok {
		return health.Verdict{}, false
	}
	pods, err := podsOfRevision(ctx, r.live, obj.GetNamespace(), sel, obj, in.Stamp)
	if err != nil {
		log.FromContext(ctx).Error(err, "reading the pods of a reader before its re-stamp; judged as healthy")
		return health.Verdict{}, false
	}
	in.Pods = pods
	if in.Pods == nil {
		// Listed, and none: not "not listed".
		in.Pods = []corev1.Pod{}
	}
	v, failing, _ = health.Before(in)
	return v, failing
}

// notJudged ends f, the flight of a reader admitted while failing before
// its change, at once: its plans count it done, so it holds up no wave and
// halts nothing. Its record says so (rec.Failing), so that a new leader
// does not judge it either, and `confighash status` shows it; so does a
// FailingBefore Event on it.
func (r *reconciler) notJudged(req Request, obj client.Object, f *flight, rec *contract.Rollout, before health.Verdict) {
	r.planner.succeededFlight(identity(req), f)
	rec.Failing = before.Reason
	names := make([]string, 0, len(rec.Changes))
	for _, c := range rec.Changes {
		names = append(names, c.Source)
	}
	r.events.Eventf(obj, nil, corev1.EventTypeWarning, contract.ReasonFailingBefore, "Restamp",
		"failing before the change of %s (%s): re-stamped, but its rollout is not judged: it is not the change's canary and halts nothing",
		strings.Join(names, ", "), before.Reason)
}
