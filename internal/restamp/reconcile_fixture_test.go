package restamp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/workload"
)

// withReadersIndex indexes b's workloads as Setup does: every kind the hook
// re-touches, each by sources.ReadKeysOf of its registry entry.
func withReadersIndex(b *fake.ClientBuilder) *fake.ClientBuilder {
	for _, k := range workload.Kinds().Mutable() {
		b = b.WithIndex(k.New(), sources.ReadersIndex, sources.ReadKeysOf(k))
	}
	return b
}

// testReconciler is the reconciler the unit tests drive: every mutable
// kind, no write budget, a fresh metrics registry and a fake recorder. A nil
// flaps leaves the guard out, which the policy tests rely on.
func testReconciler(t *testing.T, c client.Client, flaps *flapGuard, now func() time.Time) (*reconciler, *events.FakeRecorder) {
	t.Helper()
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	kinds := newWatched(workload.Kinds().Mutable()...)
	rec := events.NewFakeRecorder(10)
	return &reconciler{
		client: c, readers: c, key: hookKey, kinds: kinds, budget: rate.NewLimiter(rate.Inf, 1),
		flaps: flaps, changes: newChanges(), events: rec, metrics: m, now: now,
	}, rec
}

// drainEvents empties rec and returns the events that mention reason (all
// of them when it is empty).
func drainEvents(rec *events.FakeRecorder, reason string) []string {
	var got []string
	for {
		select {
		case e := <-rec.Events:
			if strings.Contains(e, reason) {
				got = append(got, e)
			}
		default:
			return got
		}
	}
}

// expectOneEvent drains the recorder and checks it holds exactly one event
// starting with want, or none when want is empty.
func expectOneEvent(t *testing.T, rec *events.FakeRecorder, want string) {
	t.Helper()
	close(rec.Events)
	var got []string
	for e := range rec.Events {
		got = append(got, e)
	}
	switch {
	case want == "" && len(got) > 0:
		t.Errorf("events = %q, want none", got)
	case want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], want)):
		t.Errorf("events = %q, want one starting %q", got, want)
	}
}

// quietCtx is a context whose logger discards: the code under test takes
// its logger from the context.
func quietCtx() context.Context {
	return log.IntoContext(context.Background(), logr.Discard())
}

// servedNS is namespace ns, where the tests' workloads live, with
// injection enabled.
func servedNS() *corev1.Namespace {
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns",
		Labels: map[string]string{contract.InjectionLabel: contract.InjectionEnabled}}}
}

// slimCM is configmap ns/name holding data, as the hook's cache holds it.
func slimCM(t testing.TB, ns, name string, data map[string]string) *corev1.ConfigMap {
	t.Helper()
	return slimmed(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: data})
}

// slimmed is source obj as the hook's cache holds it (sources.Slim).
func slimmed[T client.Object](t testing.TB, obj T) T {
	t.Helper()
	out, err := sources.Slim(obj)
	if err != nil {
		t.Fatal(err)
	}
	return out.(T)
}

// req is the request for Deployment ns/name.
func req(name string) Request { return reqIn("ns", name) }

// reqIn is the request for Deployment namespace/name.
func reqIn(namespace, name string) Request {
	return Request{KindName: "Deployment", NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}
}

// stampedWeb is Deployment ns/web whose pods run spec, stamped stamp (none
// when empty).
func stampedWeb(spec corev1.PodSpec, stamp string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
	d.Spec.Template.Spec = spec
	if stamp != "" {
		d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: stamp}
	}
	return d
}

// stampOf is the stamp, under key, of a template in namespace ns that runs
// spec with annotations, when content gives what each source it reads
// holds (false: the source is missing).
func stampOf(t testing.TB, key []byte, ns string, spec corev1.PodSpec, annotations map[string]string,
	content func(hasher.Source) (hasher.Content, bool),
) string {
	t.Helper()
	refs, err := hasher.References(&spec, annotations)
	if err != nil {
		t.Fatal(err)
	}
	res, err := hasher.Checksum(key, ns, refs, func(s hasher.Source) (hasher.Content, bool, error) {
		c, ok := content(s)
		return c, ok, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.Checksum
}

// holding is the content of sources that each hold data, as a ConfigMap.
func holding(data map[string]string) func(hasher.Source) (hasher.Content, bool) {
	return func(hasher.Source) (hasher.Content, bool) {
		return hasher.ConfigMapContent(&corev1.ConfigMap{Data: data}), true
	}
}

// wantSum is the stamp of a workload in ns reading configmap/app whole, when
// the ConfigMap holds data.
func wantSum(t testing.TB, data map[string]string) string {
	t.Helper()
	return stampOf(t, hookKey, "ns", envFromCM("app"), nil, holding(data))
}
