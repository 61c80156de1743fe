package webhook

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinner"
)

// The bounds of UnpinnedEvents: one Event per workload and reason per
// unpinnedEvery, and at most unpinnedMaxKeys remembered, so that a flood
// of pods (a 500-replica scale-up, a tenant creating pods in a loop) writes
// a handful of Events and holds a fixed amount of memory.
const (
	unpinnedEvery   = 10 * time.Minute
	unpinnedMaxKeys = 4096
)

// UnpinnedEvents tells a workload's owners that a pod of it was admitted
// unpinned, with a Warning Event (contract.ReasonPodUnpinned) on the
// workload. Only reasons an operator can act on are reported: a workload
// opted out, a revision with nothing to pin and a dry run are not.
type UnpinnedEvents struct {
	rec events.EventRecorder
	now func() time.Time

	mu   sync.Mutex
	last map[unpinnedKey]time.Time
}

type unpinnedKey struct {
	uid    types.UID
	reason pinner.Reason
}

// NewUnpinnedEvents writes through rec; nil writes nothing.
func NewUnpinnedEvents(rec events.EventRecorder) *UnpinnedEvents {
	return &UnpinnedEvents{rec: rec, now: time.Now, last: map[unpinnedKey]time.Time{}}
}

// reported reports whether res, for pod, warrants an Event.
func reported(r pinner.Reason) bool {
	switch r {
	case pinner.Pinned, pinner.OptedOut, pinner.NothingToPin, pinner.DryRun:
		return false
	}
	return true
}

// report writes the Event for pod, admitted with res, unless one for the
// same workload and reason was written less than unpinnedEvery ago.
func (u *UnpinnedEvents) report(pod *corev1.Pod, res pinner.Result) {
	if u == nil || u.rec == nil || !reported(res.Reason) {
		return
	}
	ref := res.Workload
	if ref == nil {
		ref = metav1.GetControllerOf(pod)
	}
	if ref == nil || ref.UID == "" {
		return
	}
	if !u.due(unpinnedKey{uid: ref.UID, reason: res.Reason}) {
		return
	}
	regarding := &metav1.PartialObjectMetadata{
		TypeMeta:   metav1.TypeMeta{APIVersion: ref.APIVersion, Kind: ref.Kind},
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: ref.Name, UID: ref.UID},
	}
	u.rec.Eventf(regarding, nil, corev1.EventTypeWarning, contract.ReasonPodUnpinned, "Pin",
		"a pod was admitted unpinned (%s): it reads the live ConfigMaps and Secrets, not its revision's snapshots; more such pods in the next %s are not reported",
		res.Reason, unpinnedEvery)
}

// due records an Event for k now, unless one was recorded within
// unpinnedEvery. When the map is full, entries past their time are dropped
// first; if none is, nothing more is reported until one is.
func (u *UnpinnedEvents) due(k unpinnedKey) bool {
	now := u.now()
	u.mu.Lock()
	defer u.mu.Unlock()
	if t, ok := u.last[k]; ok && now.Sub(t) < unpinnedEvery {
		return false
	}
	if _, ok := u.last[k]; !ok && len(u.last) >= unpinnedMaxKeys {
		for key, t := range u.last {
			if now.Sub(t) >= unpinnedEvery {
				delete(u.last, key)
			}
		}
		if len(u.last) >= unpinnedMaxKeys {
			return false
		}
	}
	u.last[k] = now
	return true
}
