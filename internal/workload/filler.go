package workload

import (
	"context"
	"fmt"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// FillPageSize is how many workloads one page of a fill lists. A page is
// decoded whole before its objects are slimmed, and a tenant's workload
// can be over a MiB, so pages stay small: a fill is rare (a namespace
// becomes served) and may take many calls.
const FillPageSize = 8

// Filler keeps a FilledCache's Fills current. When a namespace becomes
// served it reads the namespace's workloads once, live, in pages, for
// every kind the cache has an index of; when one of the informer's
// identity copies turns up in a served namespace (it was slimmed before
// the informer knew the namespace served) it reads that workload alone.
// It forgets a namespace's copies when the namespace stops being served,
// and a workload's when the informer has it slimmed or it goes.
//
// It runs on the leader only, as the workload informers (the hook's
// index starts them); it is a manager.Runnable.
type Filler struct {
	cache *FilledCache
	live  client.Reader
	// serves decides from a namespace's name and labels (injection.Policy's
	// Decide); served is the Namespace cache's answer, the transform's.
	serves func(name string, labels map[string]string) bool
	served func(namespace string) bool

	queue workqueue.TypedRateLimitingInterface[fillRequest]

	mu      sync.Mutex
	watched []Kind
}

// fillRequest is a namespace to read, every watched kind of it, or one
// workload of it (kind and name set).
type fillRequest struct {
	namespace, kind, name string
}

// NewFiller returns the Filler of c, which reads through live (the
// apiserver). It follows each mutable kind c is given an index of.
func NewFiller(c *FilledCache, live client.Reader, serves func(string, map[string]string) bool, served func(string) bool) *Filler {
	f := &Filler{cache: c, live: live, serves: serves, served: served,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[fillRequest](),
			workqueue.TypedRateLimitingQueueConfig[fillRequest]{Name: "confighash-workload-fills"})}
	c.mu.Lock()
	c.indexed = f.watch
	c.mu.Unlock()
	return f
}

// watch follows kind k's informer, and with the first kind the Namespace
// informer. Both are the cache's own, not the recording ones: the Filler
// is told nothing of its own fills.
func (f *Filler) watch(ctx context.Context, k Kind) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if slices.ContainsFunc(f.watched, func(w Kind) bool { return w.Name() == k.Name() }) {
		return nil
	}
	inf, err := f.cache.Cache.GetInformer(ctx, k.New())
	if err != nil {
		return fmt.Errorf("starting informer for %s: %w", k.Name(), err)
	}
	if _, err := inf.AddEventHandler(f.workloadHandler(k)); err != nil {
		return fmt.Errorf("watching %s for fills: %w", k.Name(), err)
	}
	if len(f.watched) == 0 {
		ns, err := f.cache.Cache.GetInformer(ctx, &corev1.Namespace{})
		if err != nil {
			return fmt.Errorf("starting informer for namespaces: %w", err)
		}
		if _, err := ns.AddEventHandler(f.namespaceHandler()); err != nil {
			return fmt.Errorf("watching namespaces for workload fills: %w", err)
		}
	}
	f.watched = append(f.watched, k)
	return nil
}

// namespaceHandler fills a namespace that becomes served and forgets one
// that stops being served. Namespaces already there when it is added need
// no fill: the workload informers slimmed their objects against the
// synced Namespace cache.
func (f *Filler) namespaceHandler() toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if ns, ok := obj.(*corev1.Namespace); ok && !initial && f.serves(ns.Name, ns.Labels) {
				f.queue.Add(fillRequest{namespace: ns.Name})
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*corev1.Namespace)
			ns, ok2 := newObj.(*corev1.Namespace)
			if !ok1 || !ok2 {
				return
			}
			was, is := f.serves(old.Name, old.Labels), f.serves(ns.Name, ns.Labels)
			switch {
			case is && !was:
				f.queue.Add(fillRequest{namespace: ns.Name})
			case was && !is:
				f.cache.fills.ForgetNamespace(ns.Name)
			}
		},
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if ns, ok := obj.(*corev1.Namespace); ok {
				f.cache.fills.ForgetNamespace(ns.Name)
			}
		},
	}
}

// workloadHandler follows what the informer holds of kind k.
func (f *Filler) workloadHandler(k Kind) toolscache.ResourceEventHandler {
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, _ bool) { f.saw(k, obj) },
		UpdateFunc: func(_, obj any) { f.saw(k, obj) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if o, ok := obj.(client.Object); ok {
				f.cache.fills.forget(k, o, false)
			}
		},
	}
}

// saw is told that the informer now holds obj.
func (f *Filler) saw(k Kind, obj any) {
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	if !IsIdentity(o) {
		f.cache.fills.forget(k, o, false)
		return
	}
	f.cache.fills.forget(k, o, true)
	if h, ok := f.cache.fills.held(k, o); ok {
		// The fill read this version before the informer had it.
		f.cache.filled(k, o, h)
		return
	}
	if f.served(o.GetNamespace()) {
		f.queue.Add(fillRequest{namespace: o.GetNamespace(), kind: k.Name(), name: o.GetName()})
	}
}

// Start fills until ctx ends. A fill that fails is retried with backoff;
// meanwhile the hook does not see the namespace's workloads (they are
// identity copies, which it leaves alone), and stamps nothing there.
func (f *Filler) Start(ctx context.Context) error {
	go func() {
		<-ctx.Done()
		f.queue.ShutDown()
	}()
	logger := log.FromContext(ctx).WithName("workload-fills")
	for {
		req, stop := f.queue.Get()
		if stop {
			return nil
		}
		if n, err := f.fill(ctx, req); err != nil {
			logger.Error(err, "reading the workloads of a newly served namespace; retrying", "namespace", req.namespace)
			f.queue.AddRateLimited(req)
		} else {
			if req.name == "" {
				logger.Info("read the workloads of a newly served namespace", "namespace", req.namespace, "filled", n)
			}
			f.queue.Forget(req)
		}
		f.queue.Done(req)
	}
}

// NeedLeaderElection is true: the workload informers run on the leader
// only.
func (f *Filler) NeedLeaderElection() bool { return true }

// fill reads req's workloads live and holds a slimmed copy of each the
// cache holds as an identity copy; it returns how many it holds.
func (f *Filler) fill(ctx context.Context, req fillRequest) (int, error) {
	f.mu.Lock()
	kinds := slices.Clone(f.watched)
	f.mu.Unlock()
	n := 0
	for _, k := range kinds {
		if req.kind != "" && k.Name() != req.kind {
			continue
		}
		base := []client.ListOption{client.InNamespace(req.namespace), client.Limit(FillPageSize)}
		if req.name != "" {
			base = append(base, client.MatchingFields{"metadata.name": req.name})
		}
		opts := base
		for {
			if !f.served(req.namespace) {
				// No longer served: nothing of it is to be held.
				f.cache.fills.ForgetNamespace(req.namespace)
				return n, nil
			}
			list := k.NewList()
			if err := f.live.List(ctx, list, opts...); err != nil {
				return n, fmt.Errorf("listing %s in %s: %w", k.Name(), req.namespace, err)
			}
			if err := apimeta.EachListItem(list, func(o runtime.Object) error {
				if obj, ok := o.(client.Object); ok && f.hold(ctx, k, obj) {
					n++
				}
				return nil
			}); err != nil {
				return n, fmt.Errorf("reading the list of %s in %s: %w", k.Name(), req.namespace, err)
			}
			next := list.GetContinue()
			if next == "" {
				break
			}
			opts = append(slices.Clip(base), client.Continue(next))
		}
	}
	return n, nil
}

// hold keeps obj's slimmed copy if the cache holds it as an identity copy,
// and tells the informer's handlers when that copy is of obj's version.
// An object the cache does not hold yet needs none: it arrives slimmed,
// or as an identity copy whose event asks for it again (saw).
func (f *Filler) hold(ctx context.Context, k Kind, obj client.Object) bool {
	cur := k.New()
	if err := f.cache.Cache.Get(ctx, client.ObjectKeyFromObject(obj), cur, client.UnsafeDisableDeepCopy); err != nil || !IsIdentity(cur) {
		return false
	}
	slim := k.SlimObject(obj)
	f.cache.fills.put(k, slim)
	if sameVersion(cur, slim) {
		f.cache.filled(k, cur, slim)
	}
	return true
}
