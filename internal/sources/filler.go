package sources

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Filler keeps Fills current: it fills a namespace when it becomes served,
// forgets it when it stops being served, and forgets a source when the
// informer sees it change or go. It runs on every replica, since the
// webhook reads the cache too; it is a manager.Runnable.
type Filler struct {
	Fills   *Fills
	Live    client.Reader
	Slimmer Slimmer
	// Serves decides from a namespace's name and labels (injection.Policy's
	// Decide).
	Serves func(name string, labels map[string]string) bool

	queue workqueue.TypedRateLimitingInterface[string]
}

// NewFiller returns a Filler; register its handlers, then start it.
func NewFiller(fills *Fills, live client.Reader, s Slimmer, serves func(string, map[string]string) bool) *Filler {
	return &Filler{
		Fills: fills, Live: live, Slimmer: s, Serves: serves,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "confighash-fills"}),
	}
}

// NamespaceHandler is the Namespace informer's handler. Namespaces of the
// initial list need no fill: the transform waits for the Namespace cache
// before it slims the first source, so their sources were slimmed as
// served or not already.
func (f *Filler) NamespaceHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if ns, ok := obj.(*corev1.Namespace); ok && !initial && f.Serves(ns.Name, ns.Labels) {
				f.queue.Add(ns.Name)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*corev1.Namespace)
			ns, ok2 := newObj.(*corev1.Namespace)
			if !ok1 || !ok2 {
				return
			}
			was, is := f.Serves(old.Name, old.Labels), f.Serves(ns.Name, ns.Labels)
			switch {
			case is && !was:
				f.queue.Add(ns.Name)
			case was && !is:
				f.Fills.ForgetNamespace(ns.Name)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if ns, ok := obj.(*corev1.Namespace); ok {
				f.Fills.ForgetNamespace(ns.Name)
			}
		},
	}
}

// SourceHandler is the ConfigMap and Secret informers' handler.
func (f *Filler) SourceHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerFuncs{
		UpdateFunc: func(_, newObj any) {
			if o, ok := newObj.(client.Object); ok {
				f.Fills.Forget(o)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if o, ok := obj.(client.Object); ok {
				f.Fills.Delete(o)
			}
		},
	}
}

// Start fills namespaces until ctx ends. A fill that fails is retried
// with backoff; meanwhile lookups of the namespace's placeholders go live
// within the webhook's budget, or fail, and no stamp changes.
func (f *Filler) Start(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		f.queue.ShutDown()
	}()
	logger := log.FromContext(ctx).WithName("fills")
	for {
		ns, stop := f.queue.Get()
		if stop {
			return nil
		}
		if err := f.Fills.Fill(ctx, f.Live, f.Slimmer, ns); err != nil {
			logger.Error(err, "reading the sources of a newly served namespace; retrying", "namespace", ns)
			f.queue.AddRateLimited(ns)
		} else {
			logger.Info("read the sources of a newly served namespace", "namespace", ns)
			f.queue.Forget(ns)
		}
		f.queue.Done(ns)
	}
}

// NeedLeaderElection is false: every replica's webhook reads the cache.
func (f *Filler) NeedLeaderElection() bool { return false }
