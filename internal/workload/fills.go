package workload

import (
	"sync"
	"sync/atomic"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Fills holds the slimmed copies (SlimObject) of workloads the cache keeps
// as identity copies although their namespace is served now: it was
// labelled, or its Namespace arrived, after they were cached. The informer
// keeps an identity copy until the object next changes; Filler reads the
// namespace's workloads once, live, so that the hook sees them meanwhile
// (FilledCache).
//
// A copy is used only in place of the identity copy of the very version it
// was read at (same UID and resourceVersion). Copies go when the informer
// holds the object slimmed, or another version of it, or it goes, and when
// the namespace stops being served. The zero value is not usable; call
// NewFills.
type Fills struct {
	mu sync.RWMutex
	// byNamespace: a List of one namespace, the hook's question, looks at
	// that namespace's copies only.
	byNamespace map[string]map[fillKey]client.Object
	n           atomic.Int64
}

type fillKey struct {
	kind string // Kind.Name
	name string
}

// NewFills returns an empty Fills.
func NewFills() *Fills {
	return &Fills{byNamespace: map[string]map[fillKey]client.Object{}}
}

// Len is the number of copies held.
func (f *Fills) Len() int { return int(f.n.Load()) }

func (f *Fills) put(k Kind, obj client.Object) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ns := f.byNamespace[obj.GetNamespace()]
	if ns == nil {
		ns = map[fillKey]client.Object{}
		f.byNamespace[obj.GetNamespace()] = ns
	}
	key := fillKey{kind: k.Name(), name: obj.GetName()}
	if _, ok := ns[key]; !ok {
		f.n.Add(1)
	}
	ns[key] = obj
}

// held returns the copy of obj's version, if there is one.
func (f *Fills) held(k Kind, obj client.Object) (client.Object, bool) {
	if f.Len() == 0 {
		return nil, false
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	h, ok := f.byNamespace[obj.GetNamespace()][fillKey{kind: k.Name(), name: obj.GetName()}]
	if !ok || !sameVersion(h, obj) {
		return nil, false
	}
	return h, true
}

// inNamespace lists the copies of kind k in namespace, every namespace
// when it is "".
func (f *Fills) inNamespace(k Kind, namespace string) []client.Object {
	if f.Len() == 0 {
		return nil
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	var out []client.Object
	for ns, m := range f.byNamespace {
		if namespace != "" && ns != namespace {
			continue
		}
		for key, obj := range m {
			if key.kind == k.Name() {
				out = append(out, obj)
			}
		}
	}
	return out
}

// forget drops the copy of obj's name unless it is of obj's version: the
// informer now holds obj, which is slimmed, another version, or gone.
// keepSame keeps a copy of obj's very version (the informer's identity
// copy it stands for).
func (f *Fills) forget(k Kind, obj client.Object, keepSame bool) {
	if f.Len() == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ns := f.byNamespace[obj.GetNamespace()]
	key := fillKey{kind: k.Name(), name: obj.GetName()}
	h, ok := ns[key]
	if !ok || (keepSame && sameVersion(h, obj)) {
		return
	}
	delete(ns, key)
	f.n.Add(-1)
	if len(ns) == 0 {
		delete(f.byNamespace, obj.GetNamespace())
	}
}

// ForgetNamespace drops every copy of namespace.
func (f *Fills) ForgetNamespace(namespace string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n.Add(-int64(len(f.byNamespace[namespace])))
	delete(f.byNamespace, namespace)
}

func sameVersion(a, b client.Object) bool {
	return a.GetUID() == b.GetUID() && a.GetResourceVersion() == b.GetResourceVersion()
}
