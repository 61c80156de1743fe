package restamp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/workload"
)

// enqueuer maps source events to the workloads that read the source.
type enqueuer struct {
	cache client.Reader
	kinds *watched
	// window is the default coalescing window, coalesceMax its cap; see
	// queue_debounce.go.
	window      time.Duration
	coalesceMax time.Duration
	changes     *changes
	// toggles records the sources whose ignore annotation changed.
	toggles *toggles
	now     func() time.Time
}

// clock is e.now, or the wall clock when unset.
func (e *enqueuer) clock() time.Time {
	if e.now == nil {
		return time.Now()
	}
	return e.now()
}

// handlerFor builds the event handler for one source kind.
func handlerFor[T client.Object](e *enqueuer, kind hasher.Kind) handler.TypedEventHandler[T, Request] {
	return handler.TypedFuncs[T, Request]{
		CreateFunc: func(ctx context.Context, ev event.TypedCreateEvent[T], q workqueue.TypedRateLimitingInterface[Request]) {
			// The initial list replays every source at start-up: that is how
			// changes made while confighash was down are caught up.
			if !ignored(ev.Object) {
				e.enqueue(ctx, q, kind, ev.Object, nil, ev.IsInInitialList)
			}
		},
		UpdateFunc: func(ctx context.Context, ev event.TypedUpdateEvent[T], q workqueue.TypedRateLimitingInterface[Request]) {
			// Labels, annotations and the like do not concern readers;
			// neither does adding or removing the ignore annotation on its
			// own (check_ignored.go), nor any change to a source that is ignored.
			// A toggle is remembered, which makes it cheap to tell later.
			if ignored(ev.ObjectOld) != ignored(ev.ObjectNew) {
				e.toggles.saw(ev.ObjectNew.GetNamespace(), hasher.Source{Kind: kind, Name: ev.ObjectNew.GetName()})
			}
			switch {
			case contentChanged(ev.ObjectOld, ev.ObjectNew) && !ignored(ev.ObjectNew):
				e.enqueue(ctx, q, kind, ev.ObjectNew, ev.ObjectOld, false)
			case wavesOff(ev.ObjectOld) != wavesOff(ev.ObjectNew) && !ignored(ev.ObjectNew):
				// Waves turned off on the source: its waiting readers
				// go now (a halted change is pushed to all).
				e.enqueue(ctx, q, kind, ev.ObjectNew, nil, true)
			case windowChanged(ev.ObjectOld, ev.ObjectNew) && !ignored(ev.ObjectNew):
				// Its window, or its urgent mark: readers waiting for a
				// window look again.
				e.enqueue(ctx, q, kind, ev.ObjectNew, nil, true)
			}
		},
		DeleteFunc: func(ctx context.Context, ev event.TypedDeleteEvent[T], q workqueue.TypedRateLimitingInterface[Request]) {
			if !ignored(ev.Object) {
				e.enqueue(ctx, q, kind, ev.Object, ev.Object, false)
			}
		},
	}
}

// enqueue queues the readers of obj. before is the source as it was before
// this change (nil when it did not exist); it is kept for the reconciler
// (check_priors.go). A replay has no before.
func (e *enqueuer) enqueue(ctx context.Context, q workqueue.TypedRateLimitingInterface[Request], kind hasher.Kind, obj, before client.Object, replay bool) {
	src := hasher.Source{Kind: kind, Name: obj.GetName()}
	err := listReaders(ctx, e.cache, e.kinds, obj.GetNamespace(), src, func(k workload.Kind, o client.Object) {
		r := Request{KindName: k.Name(), NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}, Recheck: replay}
		e.changes.add(r, src.String())
		if !replay {
			e.changes.addBefore(r, src, priorOf(before))
		}
		// The queue keeps one entry per request, due at the earliest
		// time asked for; each change also moves the end of the
		// workload's trailing window (queue_debounce.go), and the reconciler
		// waits for that before it re-stamps. So changes to its sources
		// in one burst become one re-stamp that sees all of them. A bad
		// annotation is reported by the reconciler, which has the
		// event recorder.
		w, _ := windowOf(o.GetAnnotations(), e.window, e.coalesceMax)
		e.changes.touch(r, e.clock(), w, e.coalesceMax)
		q.AddAfter(r, w)
	})
	if err != nil {
		log.FromContext(ctx).Error(err, "finding readers", "source", src, "namespace", obj.GetNamespace())
	}
}

// listReaders calls fn with each workload of namespace that reads src, as
// the field index over the watched kinds finds them. A kind whose list
// fails is skipped, and its error returned once all were tried.
func listReaders(ctx context.Context, c client.Reader, kinds *watched, namespace string, src hasher.Source, fn func(workload.Kind, client.Object)) error {
	var errs []error
	for _, k := range kinds.list() {
		list := k.NewList()
		err := c.List(ctx, list, client.InNamespace(namespace),
			client.MatchingFields{sources.ReadersIndex: sources.IndexKey(src)})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", k.GVK.Kind, err))
			continue
		}
		_ = forEachItem(list, func(o client.Object) { fn(k, o) })
	}
	return errors.Join(errs...)
}

// contentChanged compares slimmed objects: their data are digests already.
func contentChanged(oldObj, newObj client.Object) bool {
	if (oldObj.GetDeletionTimestamp() == nil) != (newObj.GetDeletionTimestamp() == nil) {
		return true
	}
	switch o := oldObj.(type) {
	case *corev1.ConfigMap:
		n := newObj.(*corev1.ConfigMap)
		return !maps.Equal(o.Data, n.Data) || !maps.EqualFunc(o.BinaryData, n.BinaryData, slices.Equal)
	case *corev1.Secret:
		n := newObj.(*corev1.Secret)
		return !maps.EqualFunc(o.Data, n.Data, slices.Equal)
	}
	return true
}

func forEachItem(list client.ObjectList, fn func(client.Object)) error {
	return apimeta.EachListItem(list, func(o runtime.Object) error {
		if co, ok := o.(client.Object); ok {
			fn(co)
		}
		return nil
	})
}

// recheckFor builds the handler that re-checks a workload shortly after it
// is created or its template changes. Two reasons:
//
//   - The source handler finds readers in the cache's index, and a workload
//     admitted a moment before a config change may not be in that index yet
//     when the change arrives: without this, it would keep a stamp of the
//     old content.
//   - The webhook stamps every template change (a metadata-only one too:
//     kubectl rollout restart, Helm's checksum/config annotation) from the
//     answering replica's view, which may lag. It reads live within a
//     budget, but past the budget, or when a live read fails, a lagging
//     replica stores an old stamp; unchecked, a later revert of the config
//     would roll nothing and the pods would keep the new content.
//
// The delay lets the caches of all replicas converge first, so the re-check
// does not act on a view older than the one the webhook stamped with; and a
// re-check that would re-stamp confirms the content live first
// (confirmLive), so that a lagging leader cannot roll anything by itself.
//
// With replay, the watch's initial list is re-checked too: a custom kind's
// watch starts after the sources' start-up replay, which therefore found
// none of its readers.
//
// With waves (pl not nil), a status change of a reader whose rollout is in
// flight brings it back at once, to judge the rollout; so does a change of
// its halt annotation (a halt released by hand) or its waves annotation,
// and its deletion, so that a wave waits for no reader that is gone.
func recheckFor(kind workload.Kind, delay time.Duration, replay bool, pl *planner) handler.TypedEventHandler[client.Object, Request] {
	add := func(o client.Object, q workqueue.TypedRateLimitingInterface[Request]) {
		q.AddAfter(Request{KindName: kind.Name(), NamespacedName: client.ObjectKeyFromObject(o), Recheck: true}, delay)
	}
	return handler.TypedFuncs[client.Object, Request]{
		CreateFunc: func(_ context.Context, ev event.TypedCreateEvent[client.Object], q workqueue.TypedRateLimitingInterface[Request]) {
			// The start-up replay of workloads adds nothing: the replay of
			// the sources already re-checks every reader.
			if replay || !ev.IsInInitialList {
				add(ev.Object, q)
			}
		},
		DeleteFunc: func(_ context.Context, ev event.TypedDeleteEvent[client.Object], q workqueue.TypedRateLimitingInterface[Request]) {
			if pl != nil {
				q.Add(Request{KindName: kind.Name(), NamespacedName: client.ObjectKeyFromObject(ev.Object)})
			}
		},
		UpdateFunc: func(_ context.Context, ev event.TypedUpdateEvent[client.Object], q workqueue.TypedRateLimitingInterface[Request]) {
			if templateChanged(kind, ev.ObjectOld, ev.ObjectNew) {
				add(ev.ObjectNew, q)
				return
			}
			r := Request{KindName: kind.Name(), NamespacedName: client.ObjectKeyFromObject(ev.ObjectNew)}
			if windowChanged(ev.ObjectOld, ev.ObjectNew) {
				// A reader waiting for its window looks again.
				q.Add(r)
				return
			}
			if pl == nil {
				return
			}
			_, inFlight := pl.inFlight(r)
			oa, na := ev.ObjectOld.GetAnnotations(), ev.ObjectNew.GetAnnotations()
			if inFlight || oa[contract.HaltAnnotation] != na[contract.HaltAnnotation] || oa[contract.WavesAnnotation] != na[contract.WavesAnnotation] {
				q.Add(r)
			}
		},
	}
}

// templateChanged reports whether an update was stamped by the webhook
// (its pod template changed in anything but the stamp, spec or metadata) or
// may have changed what the workload reads or whether it is served (its
// include, exclude or injection annotations). The hook's own writes (a
// re-stamp, a hold annotation), status writes and the rest of the
// workload's metadata change none of these, so they re-check nothing.
//
// Most updates are status writes (each rollout makes several), so the
// templates are compared only when the generation says the spec changed
// (Kind.SameGeneration): a comparison costs two deep comparisons, and for
// an unstructured kind two conversions of the template.
func templateChanged(kind workload.Kind, oldObj, newObj client.Object) bool {
	oa, na := oldObj.GetAnnotations(), newObj.GetAnnotations()
	if oa[contract.IncludeAnnotation] != na[contract.IncludeAnnotation] ||
		oa[contract.ExcludeAnnotation] != na[contract.ExcludeAnnotation] ||
		oa[contract.InjectionAnnotation] != na[contract.InjectionAnnotation] {
		return true
	}
	if kind.SameGeneration(oldObj, newObj) {
		return false
	}
	ot, ok1 := kind.PodTemplate(oldObj)
	nt, ok2 := kind.PodTemplate(newObj)
	if ok1 != ok2 {
		// A custom object that got a template, or lost it.
		return true
	}
	return ok1 && !workload.SameTemplate(ot, nt)
}

// windowChanged reports whether an update changed what decides when a
// change may roll: the window annotation of a workload or a source, or a
// source's urgent mark.
func windowChanged(old, new client.Object) bool {
	oa, na := old.GetAnnotations(), new.GetAnnotations()
	return oa[contract.WindowAnnotation] != na[contract.WindowAnnotation] || oa[contract.UrgentAnnotation] != na[contract.UrgentAnnotation]
}
