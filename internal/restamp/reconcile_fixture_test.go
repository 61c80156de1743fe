package restamp

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

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
