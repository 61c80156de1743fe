//go:build e2e

package e2e

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

	"github.com/confighash/confighash/internal/contract"
)

// stampWatch follows the stamps of one namespace's workloads of one
// resource (deployments, daemonsets) for the benchmarks. Watch rather than poll: listing hundreds of Deployments in a
// loop would load the 2 cores a benchmark measures on, and a watch sees each
// re-stamp as it lands. The API server drops a watcher that falls behind
// (seen here with the machine loaded by parallel builds), so a closed watch
// is opened again from the last resourceVersion seen: no event is lost.
type stampWatch struct {
	t      *testing.T
	res    dynamic.ResourceInterface
	what   string // "NS's RESOURCE", for messages
	ns     string
	rv     string
	w      watch.Interface
	stamps map[string]string
}

// watchStamps lists ns's Deployments until it holds n, records their
// stamps, and watches from that list.
func watchStamps(t *testing.T, ns string, n int) *stampWatch {
	return watchStampsOf(t, "deployments", ns, n)
}

// watchStampsOf is watchStamps for any apps/v1 resource with a pod
// template.
func watchStampsOf(t *testing.T, resource, ns string, n int) *stampWatch {
	t.Helper()
	dc, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	s := &stampWatch{t: t, res: dc.Resource(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: resource}).Namespace(ns),
		what: ns + "'s " + resource, ns: ns, stamps: make(map[string]string, n)}
	deadline := time.Now().Add(time.Minute)
	for {
		l, err := s.res.List(env.SpecContext(t), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) >= n {
			for i := range l.Items {
				s.stamps[l.Items[i].GetName()] = stampOf(&l.Items[i])
			}
			s.rv = l.GetResourceVersion()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d, want %d", s.what, len(l.Items), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.open()
	return s
}

func stampOf(u *unstructured.Unstructured) string {
	stamp, _, _ := unstructured.NestedString(u.Object, "spec", "template", "metadata", "annotations", contract.ChecksumAnnotation)
	return stamp
}

func (s *stampWatch) open() {
	s.t.Helper()
	w, err := s.res.Watch(env.SpecContext(s.t), metav1.ListOptions{ResourceVersion: s.rv})
	if err != nil {
		s.t.Fatalf("watching %s from %s: %v", s.what, s.rv, err)
	}
	s.w = w
}

// changed returns the next Deployment whose stamp differs from the one last
// seen, and records its new stamp; false once timeout fires.
func (s *stampWatch) changed(timeout <-chan time.Time) (string, bool) {
	s.t.Helper()
	for {
		select {
		case ev, open := <-s.w.ResultChan():
			if !open {
				s.open()
				continue
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok {
				s.t.Fatalf("watching %s: %s event %T", s.what, ev.Type, ev.Object)
			}
			s.rv = u.GetResourceVersion()
			if stamp := stampOf(u); stamp != s.stamps[u.GetName()] {
				s.stamps[u.GetName()] = stamp
				return u.GetName(), true
			}
		case <-timeout:
			return "", false
		}
	}
}

func (s *stampWatch) stop() { s.w.Stop() }
