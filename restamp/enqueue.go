package restamp

import (
	"context"
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
	"github.com/confighash/confighash/sources"
	"github.com/confighash/confighash/workload"
)

// enqueuer maps source events to the workloads that read the source.
type enqueuer struct {
	cache   client.Reader
	kinds   []workload.Kind
	window  time.Duration
	changes *changes
}

// handlerFor builds the event handler for one source kind.
func handlerFor[T client.Object](e *enqueuer, kind hasher.Kind) handler.TypedEventHandler[T, Request] {
	return handler.TypedFuncs[T, Request]{
		CreateFunc: func(ctx context.Context, ev event.TypedCreateEvent[T], q workqueue.TypedRateLimitingInterface[Request]) {
			// The initial list replays every source at start-up: that is how
			// changes made while confighash was down are caught up.
			e.enqueue(ctx, q, kind, ev.Object, ev.IsInInitialList)
		},
		UpdateFunc: func(ctx context.Context, ev event.TypedUpdateEvent[T], q workqueue.TypedRateLimitingInterface[Request]) {
			// Labels, annotations and the like do not concern readers.
			if contentChanged(ev.ObjectOld, ev.ObjectNew) {
				e.enqueue(ctx, q, kind, ev.ObjectNew, false)
			}
		},
		DeleteFunc: func(ctx context.Context, ev event.TypedDeleteEvent[T], q workqueue.TypedRateLimitingInterface[Request]) {
			e.enqueue(ctx, q, kind, ev.Object, false)
		},
	}
}

func (e *enqueuer) enqueue(ctx context.Context, q workqueue.TypedRateLimitingInterface[Request], kind hasher.Kind, obj client.Object, startup bool) {
	src := hasher.Source{Kind: kind, Name: obj.GetName()}
	for _, k := range e.kinds {
		list := k.NewList()
		err := e.cache.List(ctx, list, client.InNamespace(obj.GetNamespace()),
			client.MatchingFields{sources.ReadersIndex: sources.IndexKey(src)})
		if err != nil {
			log.FromContext(ctx).Error(err, "finding readers", "source", src, "namespace", obj.GetNamespace(), "kind", k.GVK.Kind)
			continue
		}
		_ = forEachItem(list, func(o client.Object) {
			r := Request{Kind: k.GVK.Kind, NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}, Startup: startup}
			e.changes.add(r, src.String())
			// The delay is the coalescing window: the queue keeps one entry
			// per request, due at the earliest time asked for, so changes to
			// several sources of a workload within the window become one
			// re-stamp that sees all of them.
			q.AddAfter(r, e.window)
		})
	}
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
