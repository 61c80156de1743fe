package workload

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FilledCache is the manager's cache with the Fills in place of the
// identity copies they stand for, so that everything that reads workloads
// from it (the hook's readers index, its Gets, the manager's client) sees
// a workload of a namespace served later as it sees one served all along:
//
//   - Get of an identity copy gives its filled copy of the same version.
//   - List gives the filled copies in place of identity copies; with a
//     field selector, which an identity copy matches in no index, it adds
//     the filled copies the selector matches, by the index functions
//     given to IndexField.
//   - The handlers added to a workload kind's informer get an update from
//     the identity copy to the filled one when a fill lands (Filler), as
//     if the informer had received it: the hook re-checks the workload as
//     it does one that arrives.
//
// Other kinds, and everything else, pass through.
type FilledCache struct {
	cache.Cache
	fills *Fills
	kinds Registry

	mu sync.Mutex
	// extracts are the index functions by kind name, then field.
	extracts map[string]map[string]client.IndexerFunc
	// handlers are those added through GetInformer, by kind name.
	handlers map[string]map[toolscache.ResourceEventHandlerRegistration]toolscache.ResourceEventHandler
	// indexed is told of each mutable kind once indexed (Filler.watch).
	indexed func(ctx context.Context, k Kind) error
}

// NewFilledCache wraps c, the cache of kinds' workloads, with fills.
func NewFilledCache(c cache.Cache, kinds Registry, fills *Fills) *FilledCache {
	return &FilledCache{Cache: c, fills: fills, kinds: kinds,
		extracts: map[string]map[string]client.IndexerFunc{},
		handlers: map[string]map[toolscache.ResourceEventHandlerRegistration]toolscache.ResourceEventHandler{}}
}

// Get is the cache's Get, with an identity copy's filled copy in its place.
func (c *FilledCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := c.Cache.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if !IsIdentity(obj) {
		return nil
	}
	if k, ok := c.kinds.For(obj); ok {
		if h, ok := c.fills.held(k, obj); ok {
			copyInto(obj, h)
		}
	}
	return nil
}

// List is the cache's List, with the filled copies.
func (c *FilledCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if err := c.Cache.List(ctx, list, opts...); err != nil {
		return err
	}
	if c.fills.Len() == 0 {
		return nil
	}
	k, ok := c.kindOfList(list)
	if !ok {
		return nil
	}
	items, err := apimeta.ExtractList(list)
	if err != nil {
		return err
	}
	changed := false
	for i, it := range items {
		if o, ok := it.(client.Object); ok && IsIdentity(o) {
			if h, ok := c.fills.held(k, o); ok {
				items[i], changed = h.DeepCopyObject(), true
			}
		}
	}
	var o client.ListOptions
	o.ApplyOptions(opts)
	if o.FieldSelector != nil && !o.FieldSelector.Empty() {
		for _, h := range c.fills.inNamespace(k, o.Namespace) {
			if c.matches(k, h, &o) && c.standsIn(ctx, k, h) {
				items, changed = append(items, h.DeepCopyObject()), true
			}
		}
	}
	if !changed {
		return nil
	}
	return apimeta.SetList(list, items)
}

// matches reports whether the filled copy h is selected by o's label and
// field selectors, the fields by the kind's index functions. A field
// selector this cache cannot tell (not an equality, no index function)
// selects nothing.
func (c *FilledCache) matches(k Kind, h client.Object, o *client.ListOptions) bool {
	if o.LabelSelector != nil && !o.LabelSelector.Matches(labels.Set(h.GetLabels())) {
		return false
	}
	c.mu.Lock()
	extracts := c.extracts[k.Name()]
	c.mu.Unlock()
	for _, r := range o.FieldSelector.Requirements() {
		extract := extracts[r.Field]
		if extract == nil || (r.Operator != selection.Equals && r.Operator != selection.DoubleEquals) {
			return false
		}
		if !slices.Contains(extract(h), r.Value) {
			return false
		}
	}
	return true
}

// standsIn reports whether the cache still holds the identity copy of h's
// version: a List adds h only then, so that it is neither listed twice
// nor listed in place of a newer version.
func (c *FilledCache) standsIn(ctx context.Context, k Kind, h client.Object) bool {
	cur := k.New()
	if err := c.Cache.Get(ctx, client.ObjectKeyFromObject(h), cur, client.UnsafeDisableDeepCopy); err != nil {
		return false
	}
	return IsIdentity(cur) && sameVersion(cur, h)
}

// kindOfList finds the mutable kind whose list list is.
func (c *FilledCache) kindOfList(list client.ObjectList) (Kind, bool) {
	if u, ok := list.(*unstructured.UnstructuredList); ok {
		gvk := u.GroupVersionKind()
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
		k, ok := c.kinds.Of(gvk)
		return k, ok && k.Mutable
	}
	t := reflect.TypeOf(list)
	for _, k := range c.kinds {
		if k.Mutable && !k.Unstructured() && reflect.TypeOf(k.NewList()) == t {
			return k, true
		}
	}
	return Kind{}, false
}

// IndexField indexes as the cache does, and keeps a mutable kind's
// index function for List; the kind's first index starts its Filler.
func (c *FilledCache) IndexField(ctx context.Context, obj client.Object, field string, extract client.IndexerFunc) error {
	if err := c.Cache.IndexField(ctx, obj, field, extract); err != nil {
		return err
	}
	k, ok := c.kinds.For(obj)
	if !ok || !k.Mutable {
		return nil
	}
	c.mu.Lock()
	if c.extracts[k.Name()] == nil {
		c.extracts[k.Name()] = map[string]client.IndexerFunc{}
	}
	c.extracts[k.Name()][field] = extract
	indexed := c.indexed
	c.mu.Unlock()
	if indexed != nil {
		return indexed(ctx, k)
	}
	return nil
}

// GetInformer is the cache's; a mutable kind's keeps the handlers added
// to it, for the updates of fills.
func (c *FilledCache) GetInformer(ctx context.Context, obj client.Object, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, err := c.Cache.GetInformer(ctx, obj, opts...)
	if err != nil {
		return nil, err
	}
	if k, ok := c.kinds.For(obj); ok && k.Mutable {
		return &recordingInformer{Informer: inf, c: c, kind: k.Name()}, nil
	}
	return inf, nil
}

// GetInformerForKind is GetInformer by group, version and kind.
func (c *FilledCache) GetInformerForKind(ctx context.Context, gvk schema.GroupVersionKind, opts ...cache.InformerGetOption) (cache.Informer, error) {
	inf, err := c.Cache.GetInformerForKind(ctx, gvk, opts...)
	if err != nil {
		return nil, err
	}
	if k, ok := c.kinds.Of(gvk); ok && k.Mutable {
		return &recordingInformer{Informer: inf, c: c, kind: k.Name()}, nil
	}
	return inf, nil
}

// filled tells the handlers of k's informer that old, the identity copy
// the cache holds, now reads as filled.
func (c *FilledCache) filled(k Kind, old, filled client.Object) {
	c.mu.Lock()
	hs := make([]toolscache.ResourceEventHandler, 0, len(c.handlers[k.Name()]))
	for _, h := range c.handlers[k.Name()] {
		hs = append(hs, h)
	}
	c.mu.Unlock()
	for _, h := range hs {
		h.OnUpdate(old, filled)
	}
}

func (c *FilledCache) record(kind string, reg toolscache.ResourceEventHandlerRegistration, h toolscache.ResourceEventHandler) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.handlers[kind] == nil {
		c.handlers[kind] = map[toolscache.ResourceEventHandlerRegistration]toolscache.ResourceEventHandler{}
	}
	c.handlers[kind][reg] = h
}

func (c *FilledCache) unrecord(kind string, reg toolscache.ResourceEventHandlerRegistration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.handlers[kind], reg)
}

// recordingInformer keeps the handlers added to a mutable kind's informer.
type recordingInformer struct {
	cache.Informer
	c    *FilledCache
	kind string
}

func (i *recordingInformer) AddEventHandler(h toolscache.ResourceEventHandler) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandler(h)
	if err == nil {
		i.c.record(i.kind, reg, h)
	}
	return reg, err
}

func (i *recordingInformer) AddEventHandlerWithResyncPeriod(h toolscache.ResourceEventHandler, d time.Duration) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandlerWithResyncPeriod(h, d)
	if err == nil {
		i.c.record(i.kind, reg, h)
	}
	return reg, err
}

func (i *recordingInformer) AddEventHandlerWithOptions(h toolscache.ResourceEventHandler, o toolscache.HandlerOptions) (toolscache.ResourceEventHandlerRegistration, error) {
	reg, err := i.Informer.AddEventHandlerWithOptions(h, o)
	if err == nil {
		i.c.record(i.kind, reg, h)
	}
	return reg, err
}

func (i *recordingInformer) RemoveEventHandler(reg toolscache.ResourceEventHandlerRegistration) error {
	i.c.unrecord(i.kind, reg)
	return i.Informer.RemoveEventHandler(reg)
}

// copyInto writes a deep copy of from over obj, an object of its type.
func copyInto(obj client.Object, from runtime.Object) {
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(from.DeepCopyObject()).Elem())
}
