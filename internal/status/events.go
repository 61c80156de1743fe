package status

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
)

// eventObject identifies the object an Event is about.
type eventObject struct {
	namespace, kind, name string
}

// eventIndex holds confighash's Events by the object they are about.
type eventIndex map[eventObject][]corev1.Event

// listEvents reads confighash's Events (reportingController
// contract.EventSource; Events with the same reasons from anyone else are
// ignored) in namespace ns ("" for all), about object name when it is set.
// Both the core and the events.k8s.io API serve the same Events; the core
// one is read because it filters by reporting controller.
func listEvents(ctx context.Context, c client.Reader, ns, name string) (eventIndex, error) {
	sel := fields.Set{"reportingComponent": contract.EventSource}
	if name != "" {
		sel["involvedObject.name"] = name
	}
	opts := []client.ListOption{client.MatchingFieldsSelector{Selector: sel.AsSelector()}}
	if ns != "" {
		opts = append(opts, client.InNamespace(ns))
	}
	list := &corev1.EventList{}
	if err := c.List(ctx, list, opts...); err != nil {
		return nil, fmt.Errorf("listing confighash events: %w", err)
	}
	idx := eventIndex{}
	for _, e := range list.Items {
		o := e.InvolvedObject
		key := eventObject{o.Namespace, o.Kind, o.Name}
		idx[key] = append(idx[key], e)
	}
	return idx, nil
}

// latest returns the newest Event of each of the hook's reasons about the
// object with the given identity. Events carrying another UID are about an
// earlier object of the same name and are skipped.
func (idx eventIndex) latest(ns, kind, name string, uid types.UID) (changed, hold, missing *Event) {
	for i := range idx[eventObject{ns, kind, name}] {
		e := &idx[eventObject{ns, kind, name}][i]
		if e.InvolvedObject.UID != "" && uid != "" && e.InvolvedObject.UID != uid {
			continue
		}
		var slot **Event
		switch e.Reason {
		case contract.ReasonConfigChanged:
			slot = &changed
		case contract.ReasonFlapHold:
			slot = &hold
		case contract.ReasonSourceMissing:
			slot = &missing
		default:
			continue
		}
		if ev := eventOf(e); newer(ev, *slot) {
			*slot = ev
		}
	}
	return changed, hold, missing
}

// eventOf summarises e, taking the time it was last observed from wherever
// the API that wrote it keeps it.
func eventOf(e *corev1.Event) *Event {
	t := e.CreationTimestamp.Time
	count := max(e.Count, 1)
	for _, c := range []time.Time{e.FirstTimestamp.Time, e.LastTimestamp.Time, e.EventTime.Time} {
		if c.After(t) {
			t = c
		}
	}
	if s := e.Series; s != nil {
		if s.LastObservedTime.After(t) {
			t = s.LastObservedTime.Time
		}
		count = max(count, s.Count)
	}
	return &Event{Type: e.Type, Reason: e.Reason, Time: t, Count: count, Message: e.Message}
}
