package framework

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
)

// The steps every spec takes against an Env, root and node suites alike.
// Each fails the test on an error, so a spec reads as the story it tells.

// SpecContext is a context for one spec's calls, cancelled after
// Env.SpecTimeout. Not t.Context(): that is cancelled before cleanups run,
// and cleanups (deleting a namespace, restoring confighash) need a live
// context too.
func (e *Env) SpecContext(t testing.TB) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), e.SpecTimeout)
	t.Cleanup(cancel)
	return ctx
}

// NewNamespace creates a fresh namespace, labelled for injection or not,
// and deletes it when the spec ends.
func (e *Env) NewNamespace(t testing.TB, labelled bool) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("e2e-%d", rand.Uint32())}}
	if labelled {
		ns.Labels = map[string]string{contract.InjectionLabel: contract.InjectionEnabled}
	}
	if err := e.Client.Create(e.SpecContext(t), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	t.Cleanup(func() { _ = e.Client.Delete(context.Background(), ns) })
	return ns.Name
}

// Create creates obj.
func (e *Env) Create(t testing.TB, obj client.Object, opts ...client.CreateOption) {
	t.Helper()
	if err := e.Client.Create(e.SpecContext(t), obj, opts...); err != nil {
		t.Fatalf("creating %T %s: %v", obj, obj.GetName(), err)
	}
}

// Update re-reads obj, applies mutate and writes it, again on a conflict.
// Any other error fails at once.
func (e *Env) Update(t testing.TB, obj client.Object, mutate func()) {
	t.Helper()
	err := wait.PollUntilContextTimeout(e.SpecContext(t), 50*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := e.Client.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, err
		}
		mutate()
		err := e.Client.Update(ctx, obj)
		if apierrors.IsConflict(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		t.Fatalf("updating %s: %v", obj.GetName(), err)
	}
}

// Kubectl runs the real kubectl against the cluster, as a user does, and
// returns what it printed: warnings (an admission warning, say) go to
// stderr.
func (e *Env) Kubectl(t testing.TB, stdin string, args ...string) (stdout, stderr string) {
	t.Helper()
	stdout, stderr, err := e.kubectl(e.SpecContext(t), stdin, args...)
	if err != nil {
		t.Fatal(err)
	}
	return stdout, stderr
}

// StampOf reads obj back and returns the stamp on its pod template (see
// TemplateStamp).
func (e *Env) StampOf(t testing.TB, obj client.Object) string {
	t.Helper()
	if err := e.Client.Get(e.SpecContext(t), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatalf("reading %T %s: %v", obj, obj.GetName(), err)
	}
	s, err := TemplateStamp(obj)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// WaitAllStamped waits, polling every poll for at most within, until each
// of objs carries stamp want, and fails t with how many did not.
func WaitAllStamped[T client.Object](t testing.TB, e *Env, objs []T, want string, poll, within time.Duration) {
	t.Helper()
	stale := func() int {
		n := 0
		for _, o := range objs {
			if e.StampOf(t, o) != want {
				n++
			}
		}
		return n
	}
	err := wait.PollUntilContextTimeout(e.SpecContext(t), poll, within, true, func(context.Context) (bool, error) {
		return stale() == 0, nil
	})
	if err != nil {
		t.Fatalf("%d of %d workloads did not get stamp %s within %s", stale(), len(objs), want, within)
	}
}

// ReplicaSets lists the ReplicaSets that Deployment ns/name owns.
func (e *Env) ReplicaSets(t testing.TB, ns, name string) []appsv1.ReplicaSet {
	t.Helper()
	return e.ControlledReplicaSets(t, ns, "Deployment", name)
}

// ControlledReplicaSets lists the ReplicaSets in ns whose controller is
// the object of kind named name.
func (e *Env) ControlledReplicaSets(t testing.TB, ns, kind, name string) []appsv1.ReplicaSet {
	t.Helper()
	l := &appsv1.ReplicaSetList{}
	if err := e.Client.List(e.SpecContext(t), l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []appsv1.ReplicaSet
	for _, rs := range l.Items {
		if c := metav1.GetControllerOf(&rs); c != nil && c.Kind == kind && c.Name == name {
			out = append(out, rs)
		}
	}
	return out
}

// CurrentReplicaSet is the ReplicaSet of Deployment ns/name whose template
// carries the Deployment's stamp: the one its rollout ends on.
func (e *Env) CurrentReplicaSet(t testing.TB, ns, name string) string {
	t.Helper()
	rs, ok := e.LookupCurrentReplicaSet(t, ns, name)
	if !ok {
		t.Fatalf("no ReplicaSet of %s carries its stamp", name)
	}
	return rs
}

// LookupCurrentReplicaSet is CurrentReplicaSet without failing: right after
// a re-stamp the Deployment controller has yet to create the new
// ReplicaSet.
func (e *Env) LookupCurrentReplicaSet(t testing.TB, ns, name string) (string, bool) {
	t.Helper()
	want := e.StampOf(t, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}})
	for _, rs := range e.ReplicaSets(t, ns, name) {
		if got, err := TemplateStamp(&rs); err == nil && got == want {
			return rs.Name, true
		}
	}
	return "", false
}
