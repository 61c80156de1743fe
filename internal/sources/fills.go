package sources

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
)

// FillPageSize is how many objects one page of a fill lists. The page is
// decoded whole before it is slimmed, and a hostile ConfigMap decodes to
// some 10 MiB, so pages stay small: a fill is rare (a namespace becomes
// served) and may take many calls.
const FillPageSize = 4

// Fills holds the digests of sources the informer cache keeps as NotServed
// placeholders although their namespace is served now: it was labelled
// after they were cached. The informer keeps a placeholder until the
// object next changes; Fill reads the namespace's sources once, live, so
// that the webhook and the hook see its content meanwhile.
//
// An entry is used only for the placeholder of the very version it was
// read at (same UID and resourceVersion). Any other version is read live
// by the webhook, within its budget, or is not known at all, and then no
// stamp is computed from it. Entries go when the informer sees the object
// change or go (Forget) and when the namespace stops being served.
// The zero value is not usable; call NewFills.
type Fills struct {
	mu sync.RWMutex
	m  map[fillKey]client.Object
}

type fillKey struct {
	kind      hasher.Kind
	namespace string
	name      string
}

// NewFills returns an empty Fills.
func NewFills() *Fills {
	return &Fills{m: map[fillKey]client.Object{}}
}

func keyOf(obj client.Object) (fillKey, bool) {
	k := fillKey{namespace: obj.GetNamespace(), name: obj.GetName()}
	switch obj.(type) {
	case *corev1.ConfigMap:
		k.kind = hasher.ConfigMap
	case *corev1.Secret:
		k.kind = hasher.Secret
	default:
		return k, false
	}
	return k, true
}

// Len is the number of sources held.
func (f *Fills) Len() int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.m)
}

// Fill lists namespace's ConfigMaps and Secrets through live and holds
// each, slimmed by s (every namespace served, s's key bound).
func (f *Fills) Fill(ctx context.Context, live client.Reader, s Slimmer, namespace string) error {
	s.Serves = nil
	if err := fillList(ctx, f, live, s, namespace, &corev1.ConfigMapList{}, func(l *corev1.ConfigMapList) []client.Object {
		out := make([]client.Object, len(l.Items))
		for i := range l.Items {
			out[i] = &l.Items[i]
		}
		return out
	}); err != nil {
		return err
	}
	return fillList(ctx, f, live, s, namespace, &corev1.SecretList{}, func(l *corev1.SecretList) []client.Object {
		out := make([]client.Object, len(l.Items))
		for i := range l.Items {
			out[i] = &l.Items[i]
		}
		return out
	})
}

func fillList[L client.ObjectList](ctx context.Context, f *Fills, live client.Reader, s Slimmer, namespace string, list L, items func(L) []client.Object) error {
	opts := []client.ListOption{client.InNamespace(namespace), client.Limit(FillPageSize)}
	for {
		if err := live.List(ctx, list, opts...); err != nil {
			return fmt.Errorf("listing %T in %s: %w", list, namespace, err)
		}
		for _, obj := range items(list) {
			slim, err := s.Slim(obj)
			if err != nil {
				return err
			}
			f.put(slim.(client.Object))
		}
		next := list.GetContinue()
		if next == "" {
			return nil
		}
		opts = []client.ListOption{client.InNamespace(namespace), client.Limit(FillPageSize), client.Continue(next)}
	}
}

func (f *Fills) put(obj client.Object) {
	k, ok := keyOf(obj)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m[k] = obj
}

// Delete drops what is held for obj, a ConfigMap or Secret the informer
// saw go.
func (f *Fills) Delete(obj client.Object) {
	if k, ok := keyOf(obj); ok {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.m, k)
	}
}

// Forget drops what is held for obj, a ConfigMap or Secret the informer
// saw change: its new version is slimmed as its namespace is now.
func (f *Fills) Forget(obj client.Object) {
	k, ok := keyOf(obj)
	if !ok {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	// The fill may have read the very version this event delivers (the
	// informer's handlers run after its store has the object): that one
	// stays, or the placeholder in the cache would never be filled.
	if h, ok := f.m[k]; ok && h.GetUID() == obj.GetUID() && h.GetResourceVersion() == obj.GetResourceVersion() {
		return
	}
	delete(f.m, k)
}

// ForgetNamespace drops everything held for namespace.
func (f *Fills) ForgetNamespace(namespace string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for k := range f.m {
		if k.namespace == namespace {
			delete(f.m, k)
		}
	}
}

// held returns what is held for the placeholder p, if it is of p's
// version.
func (f *Fills) held(p client.Object) (client.Object, bool) {
	k, ok := keyOf(p)
	if !ok {
		return nil, false
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	h, ok := f.m[k]
	if !ok || h.GetUID() != p.GetUID() || h.GetResourceVersion() != p.GetResourceVersion() {
		return nil, false
	}
	return h, true
}

// Reader returns cache with NotServed placeholders replaced by what f
// holds of their version. Other objects, and Lists, pass through.
func (f *Fills) Reader(cache client.Reader) client.Reader {
	return filledReader{cache: cache, fills: f}
}

type filledReader struct {
	cache client.Reader
	fills *Fills
}

func (r filledReader) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if err := r.cache.Get(ctx, key, obj, opts...); err != nil {
		return err
	}
	if placeholder(obj) != NotServed {
		return nil
	}
	h, ok := r.fills.held(obj)
	if !ok {
		return nil
	}
	var o client.GetOptions
	o.ApplyOptions(opts)
	shared := o.UnsafeDisableDeepCopy != nil && *o.UnsafeDisableDeepCopy
	switch out := obj.(type) {
	case *corev1.ConfigMap:
		if shared {
			*out = *h.(*corev1.ConfigMap)
		} else {
			h.(*corev1.ConfigMap).DeepCopyInto(out)
		}
	case *corev1.Secret:
		if shared {
			*out = *h.(*corev1.Secret)
		} else {
			h.(*corev1.Secret).DeepCopyInto(out)
		}
	}
	return nil
}

func (r filledReader) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return r.cache.List(ctx, list, opts...)
}
