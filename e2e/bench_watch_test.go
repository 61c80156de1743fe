//go:build e2e

package e2e

import (
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	"github.com/confighash/confighash/internal/contract"
)

// stampWatch follows the stamps of one namespace's Deployments for the
// benchmarks. Watch rather than poll: listing hundreds of Deployments in a
// loop would load the 2 cores a benchmark measures on, and a watch sees each
// re-stamp as it lands. The API server drops a watcher that falls behind
// (seen here with the machine loaded by parallel builds), so a closed watch
// is opened again from the last resourceVersion seen: no event is lost.
type stampWatch struct {
	t      *testing.T
	cs     kubernetes.Interface
	ns     string
	rv     string
	w      watch.Interface
	stamps map[string]string
}

// watchStamps lists ns's Deployments until it holds n, records their
// stamps, and watches from that list.
func watchStamps(t *testing.T, ns string, n int) *stampWatch {
	t.Helper()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	s := &stampWatch{t: t, cs: cs, ns: ns, stamps: make(map[string]string, n)}
	deadline := time.Now().Add(time.Minute)
	for {
		l, err := cs.AppsV1().Deployments(ns).List(env.SpecContext(t), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Items) >= n {
			for _, d := range l.Items {
				s.stamps[d.Name] = d.Spec.Template.Annotations[contract.ChecksumAnnotation]
			}
			s.rv = l.ResourceVersion
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %d Deployments, want %d", ns, len(l.Items), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.open()
	return s
}

func (s *stampWatch) open() {
	s.t.Helper()
	w, err := s.cs.AppsV1().Deployments(s.ns).Watch(env.SpecContext(s.t), metav1.ListOptions{ResourceVersion: s.rv})
	if err != nil {
		s.t.Fatalf("watching %s's Deployments from %s: %v", s.ns, s.rv, err)
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
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok {
				s.t.Fatalf("watching %s's Deployments: %s event %T", s.ns, ev.Type, ev.Object)
			}
			s.rv = d.ResourceVersion
			if stamp := d.Spec.Template.Annotations[contract.ChecksumAnnotation]; stamp != s.stamps[d.Name] {
				s.stamps[d.Name] = stamp
				return d.Name, true
			}
		case <-timeout:
			return "", false
		}
	}
}

func (s *stampWatch) stop() { s.w.Stop() }
