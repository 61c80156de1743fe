package workload

import (
	"context"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllertest"

	"github.com/confighash/confighash/internal/contract"
)

// readersField and readKeys stand for the hook's readers index
// (sources.ReadersIndex, sources.ReadKeysOf), which this package cannot
// import.
const readersField = "readers"

func readKeys(k Kind) client.IndexerFunc {
	return func(obj client.Object) []string {
		r := ReadsOf(k, obj)
		if r.Skip != NotSkipped {
			return nil
		}
		var keys []string
		for _, ref := range r.Refs {
			keys = append(keys, ref.Source.String())
		}
		return keys
	}
}

// fillFixture is a FilledCache over a fake cache (an indexed fake client
// for its reads, fake informers for its events), its Filler reading a
// fake apiserver, and a namespace "late" not served at first.
type fillFixture struct {
	k       Kind
	cached  client.WithWatch
	live    client.WithWatch
	fakes   *informertest.FakeInformers
	cache   *FilledCache
	filler  *Filler
	mu      sync.Mutex
	servedN map[string]bool
	// updates are what a handler added through the FilledCache saw.
	updates chan [2]client.Object
}

type fakeCache struct {
	*informertest.FakeInformers
	client.Reader
}

func (c fakeCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	return c.Reader.Get(ctx, key, obj, opts...)
}

func (c fakeCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	return c.Reader.List(ctx, list, opts...)
}

// newFillFixture: d is in the apiserver, and the cache holds its identity
// copy, as the informer holds a workload cached while its namespace was
// not served.
func newFillFixture(t *testing.T, d *appsv1.Deployment) *fillFixture {
	t.Helper()
	k := kindNamed(t, "Deployment")
	f := &fillFixture{k: k, servedN: map[string]bool{}, updates: make(chan [2]client.Object, 16)}
	f.cached = fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(k.IdentityObject(d.DeepCopy())).
		WithIndex(&appsv1.Deployment{}, readersField, readKeys(k)).Build()
	f.live = fake.NewClientBuilder().WithScheme(clientgoscheme.Scheme).WithObjects(d).
		WithIndex(&appsv1.Deployment{}, "metadata.name", func(o client.Object) []string { return []string{o.GetName()} }).Build()
	f.fakes = &informertest.FakeInformers{Scheme: clientgoscheme.Scheme}
	f.cache = NewFilledCache(fakeCache{FakeInformers: f.fakes, Reader: f.cached}, Kinds(), NewFills())
	f.filler = NewFiller(f.cache, f.live, func(name string, labels map[string]string) bool {
		return labels[contract.InjectionLabel] == contract.InjectionEnabled
	}, f.served)
	ctx := t.Context()
	if err := f.cache.IndexField(ctx, &appsv1.Deployment{}, readersField, readKeys(k)); err != nil {
		t.Fatal(err)
	}
	inf, err := f.cache.GetInformer(ctx, &appsv1.Deployment{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inf.AddEventHandler(updateRecorder(f.updates)); err != nil {
		t.Fatal(err)
	}
	go func() { _ = f.filler.Start(ctx) }()
	return f
}

func updateRecorder(ch chan [2]client.Object) toolscacheHandler {
	return toolscacheHandler{update: func(o, n any) { ch <- [2]client.Object{o.(client.Object), n.(client.Object)} }}
}

func (f *fillFixture) served(ns string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.servedN[ns]
}

// label serves namespace or stops serving it, as the Namespace informer
// tells it.
func (f *fillFixture) label(t *testing.T, namespace string, serve bool) {
	t.Helper()
	f.mu.Lock()
	was := f.servedN[namespace]
	f.servedN[namespace] = serve
	f.mu.Unlock()
	nsInf, err := f.fakes.FakeInformerFor(t.Context(), &corev1.Namespace{})
	if err != nil {
		t.Fatal(err)
	}
	nsInf.Update(namespaceObj(namespace, was), namespaceObj(namespace, serve))
}

func namespaceObj(name string, served bool) *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	if served {
		ns.Labels[contract.InjectionLabel] = contract.InjectionEnabled
	}
	return ns
}

func (f *fillFixture) deploymentInformer(t *testing.T) *controllertest.FakeInformer {
	t.Helper()
	inf, err := f.fakes.FakeInformerFor(t.Context(), &appsv1.Deployment{})
	if err != nil {
		t.Fatal(err)
	}
	return inf
}

// readers lists the Deployments of namespace "late" that read Secret db,
// as the hook does.
func (f *fillFixture) readers(t *testing.T) []string {
	t.Helper()
	l := &appsv1.DeploymentList{}
	if err := f.cache.List(t.Context(), l, client.InNamespace("late"), client.MatchingFields{readersField: "secret/db"}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range l.Items {
		names = append(names, d.Name)
	}
	return names
}

// lateReader is a Deployment of namespace "late" that reads Secret db, as
// the apiserver holds it.
func lateReader(name, rv string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "late", Name: name, UID: types.UID("uid-" + name), ResourceVersion: rv}}
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "app", EnvFrom: []corev1.EnvFromSource{{
		SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}}}}}}
	return d
}

// identity is the cache's copy of d.
func (f *fillFixture) identity(t *testing.T, d *appsv1.Deployment) client.Object {
	t.Helper()
	id := &appsv1.Deployment{}
	if err := f.cached.Get(t.Context(), client.ObjectKeyFromObject(d), id); err != nil {
		t.Fatal(err)
	}
	if !IsIdentity(id) || id.ResourceVersion != d.ResourceVersion {
		t.Fatalf("the cache holds %v at %s, want the identity copy at %s", id.Annotations, id.ResourceVersion, d.ResourceVersion)
	}
	return id
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 5s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestFillerFillsANamespaceServedLater: a workload cached while its
// namespace was not served is an identity copy, which the readers index
// does not list. Once the namespace is labelled, the Filler reads it
// live: the index lists it, Get gives its slimmed copy, which reads what
// it reads, and the handlers added to the informer (the hook's) get an
// update from the identity copy to it. Once the namespace stops being
// served, the copy goes.
func TestFillerFillsANamespaceServedLater(t *testing.T) {
	d := lateReader("web", "10")
	f := newFillFixture(t, d)
	if got := f.readers(t); len(got) != 0 {
		t.Fatalf("before the namespace is served, readers of secret/db: %v, want none", got)
	}

	f.label(t, "late", true)
	waitFor(t, "the reader listed by the index", func() bool { return len(f.readers(t)) == 1 })
	got := &appsv1.Deployment{}
	if err := f.cache.Get(t.Context(), client.ObjectKeyFromObject(d), got); err != nil {
		t.Fatal(err)
	}
	if IsIdentity(got) || !IsSlim(got) || got.ResourceVersion != "10" {
		t.Fatalf("Get gives %v (rv %s), want the slimmed copy of version 10", got.Annotations, got.ResourceVersion)
	}
	if r := ReadsOf(f.k, got); len(r.Refs) != 1 || r.Refs[0].Source.String() != "secret/db" {
		t.Errorf("the filled copy reads %+v, want secret/db", r.Refs)
	}
	all := &appsv1.DeploymentList{}
	if err := f.cache.List(t.Context(), all, client.InNamespace("late")); err != nil {
		t.Fatal(err)
	}
	if len(all.Items) != 1 || IsIdentity(&all.Items[0]) {
		t.Errorf("a List of the namespace gives %d items, the first an identity copy: want the filled copy alone", len(all.Items))
	}
	select {
	case u := <-f.updates:
		if !IsIdentity(u[0]) || IsIdentity(u[1]) || u[1].GetName() != "web" {
			t.Errorf("the handler got an update from %v to %v, want from the identity copy to the filled one", u[0].GetAnnotations(), u[1].GetAnnotations())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the informer's handlers were not told of the fill")
	}

	f.label(t, "late", false)
	if n := f.cache.fills.Len(); n != 0 {
		t.Errorf("%d copies held after the namespace stopped being served", n)
	}
	if got := f.readers(t); len(got) != 0 {
		t.Errorf("after the namespace stopped being served, readers: %v", got)
	}
}

// TestFillerReadsAnIdentityCopyInAServedNamespace: a workload slimmed as
// an identity copy before the informer knew its namespace served (it was
// created a moment after the namespace, or labelled a moment before) is
// read alone, when its event comes; a copy of another version than the
// cache's stands in for nothing.
func TestFillerReadsAnIdentityCopyInAServedNamespace(t *testing.T) {
	d := lateReader("api", "20")
	f := newFillFixture(t, d)
	f.mu.Lock()
	f.servedN["late"] = true
	f.mu.Unlock()
	id := f.identity(t, d)
	f.deploymentInformer(t).Add(id)
	waitFor(t, "the reader listed by the index", func() bool { return len(f.readers(t)) == 1 })

	// The informer moves to another version, still an identity copy:
	// the copy of 20 stands in for it no more.
	newer := id.DeepCopyObject().(client.Object)
	if err := f.cached.Update(t.Context(), newer); err != nil {
		t.Fatal(err)
	}
	if got := f.readers(t); len(got) != 0 {
		t.Errorf("with the cache at another version, readers: %v, want none", got)
	}
	got := &appsv1.Deployment{}
	if err := f.cache.Get(t.Context(), client.ObjectKeyFromObject(d), got); err != nil {
		t.Fatal(err)
	}
	if !IsIdentity(got) {
		t.Errorf("Get gave a copy of another version than the cache's")
	}
}

// toolscacheHandler is a ResourceEventHandler of updates only.
type toolscacheHandler struct{ update func(o, n any) }

func (toolscacheHandler) OnAdd(any, bool)     {}
func (h toolscacheHandler) OnUpdate(o, n any) { h.update(o, n) }
func (toolscacheHandler) OnDelete(any)        {}
