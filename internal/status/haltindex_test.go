package status

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/status/statustest"
	"github.com/confighash/confighash/internal/workload"
)

// listCounter counts the metadata-only lists made through it, and fails
// them when failMeta is set.
type listCounter struct {
	client.Client
	failMeta bool
	mu       sync.Mutex
	meta     int
}

func (l *listCounter) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	if _, ok := list.(*metav1.PartialObjectMetadataList); ok {
		l.mu.Lock()
		l.meta++
		l.mu.Unlock()
		if l.failMeta {
			return errors.New("forbidden")
		}
	}
	return l.Client.List(ctx, list, opts...)
}

func TestCollectHalts(t *testing.T) {
	since := time.Date(2026, 12, 1, 0, 12, 0, 0, time.UTC)
	labelled := map[string]string{contract.InjectionLabel: contract.InjectionEnabled}
	halt := sealed(contract.Halt{Since: since, Reason: "CrashLoopBackOff",
		Changes: []contract.Change{{Source: "configmap/cfg", Content: "0123456789abcdef"}}}.String())
	rollout := sealed(contract.Rollout{Since: since, Changes: []contract.Change{{Source: "configmap/cfg", Content: "0123456789abcdef"}}}.String())
	spec := readsSpec("cfg", "sec")
	base := statustest.NewClient(t,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: labelled}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other", Labels: labelled}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cfg"}, Data: map[string]string{"a": secretValue}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "sec"}, Data: map[string][]byte{"password": []byte(secretValue)}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "flags"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "cfg"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "other", Name: "sec"}},
		deploy("shop", "canary", "v1:new", spec, map[string]string{contract.HaltAnnotation: halt, contract.RolloutAnnotation: rollout}),
		deploy("shop", "web", "v1:old", spec, nil),
		deploy("shop", "early", "v1:new", spec, map[string]string{contract.RolloutAnnotation: rollout}),
		// configmap/flags: a released halt and an unreadable one, which
		// hold back nobody.
		deploy("shop", "freed", "v1:new", readsSpec("flags", "sec"), map[string]string{contract.HaltAnnotation: contract.HaltReleased}),
		deploy("shop", "garbled", "v1:new", readsSpec("flags", "sec"), map[string]string{contract.HaltAnnotation: "v2 whatever"}),
		deploy("shop", "flagreader", "v1:old", readsSpec("flags", "sec"), nil),
		deploy("other", "web", "v1:old", spec, nil),
	)
	st := &fakeStamper{stamps: map[string]string{"canary": "v1:new", "web": "v1:new", "early": "v1:new", "freed": "v1:new",
		"garbled": "v1:new", "flagreader": "v1:new"}}
	want := map[string]State{
		"shop/canary": StateHalted, "shop/web": StateWaiting, "shop/early": StateCurrent,
		"shop/freed": StateCurrent, "shop/garbled": StateCurrent, "shop/flagreader": StateStale,
		"other/web": StateStale, // a halt in another namespace is of another ConfigMap
	}
	check := func(t *testing.T, r *Report) {
		t.Helper()
		for _, w := range r.Workloads {
			if s, ok := want[w.Namespace+"/"+w.Name]; ok && w.State != s {
				t.Errorf("%s/%s: %s (%s), want %s", w.Namespace, w.Name, w.State, w.Reason, s)
			}
			if w.Namespace == "shop" && w.Name == "web" {
				if len(w.HaltedChanges) != 1 || w.HaltedChanges[0].Workload != "deployment/canary" ||
					!strings.HasPrefix(w.Reason, "waiting: change of configmap/cfg halted at deployment/canary (CrashLoopBackOff)") {
					t.Errorf("web: %+v", w)
				}
			}
			if w.Name == "freed" && !strings.Contains(w.Reason, "released by hand") {
				t.Errorf("freed: reason %q does not say its halt is released", w.Reason)
			}
			if w.Name == "canary" && (w.Rollout == nil || !w.Rollout.Since.Equal(since) || w.Halt == nil || w.Halt.Reason != "CrashLoopBackOff") {
				t.Errorf("canary: halt %+v, rollout %+v", w.Halt, w.Rollout)
			}
		}
	}

	t.Run("a namespace: the workloads listed are the index, no more lists", func(t *testing.T) {
		c := &listCounter{Client: base}
		r, err := Collect(t.Context(), c, Options{Kinds: workload.Kinds(), Namespace: "shop", Stamper: st})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Workloads) != 6 || c.meta != 0 {
			t.Errorf("%d workloads, %d metadata lists; want 6 and none", len(r.Workloads), c.meta)
		}
		check(t, r)
	})
	t.Run("all namespaces", func(t *testing.T) {
		r, err := Collect(t.Context(), base, Options{Kinds: workload.Kinds(), AllNamespaces: true, Stamper: st})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Workloads) != 7 {
			t.Errorf("%d workloads, want 7", len(r.Workloads))
		}
		check(t, r)
	})
	t.Run("a named reader: one metadata list per served kind", func(t *testing.T) {
		c := &listCounter{Client: base}
		r, err := Collect(t.Context(), c, Options{Kinds: workload.Kinds(), Target: Target{Name: "web"}, Namespace: "shop", Stamper: st})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Workloads) != 1 || c.meta != len(workload.Kinds().Mutable()) {
			t.Errorf("%d workloads, %d metadata lists; want 1 and %d", len(r.Workloads), c.meta, len(workload.Kinds().Mutable()))
		}
		check(t, r)
	})
	t.Run("the halts cannot be listed: stale, with a warning", func(t *testing.T) {
		c := &listCounter{Client: base, failMeta: true}
		r, err := Collect(t.Context(), c, Options{Kinds: workload.Kinds(), Target: Target{Name: "web"}, Namespace: "shop", Stamper: st})
		if err != nil {
			t.Fatal(err)
		}
		if w := r.Workloads[0]; w.State != StateStale || len(w.Warnings) != 1 || !strings.Contains(w.Warnings[0], "waiting cannot be told from stale") {
			t.Errorf("got %s (%s), warnings %q", w.State, w.Reason, w.Warnings)
		}
	})
}

// TestHaltIndexWavesOff: no halt holds back a reader that opts out of
// waves, nor a reader of a source that does, as the hook re-stamps them
// at once (waves.PaceOf); a halt dated ahead holds back nobody, as the
// hook refuses it.
func TestHaltIndexWavesOff(t *testing.T) {
	now := time.Now()
	halt := func(src string, since time.Time) map[string]string {
		return map[string]string{contract.HaltAnnotation: sealed(contract.Halt{Since: since.Truncate(time.Second), Reason: "CrashLoopBackOff",
			Changes: []contract.Change{{Source: src, Content: "0123456789abcdef"}}}.String())}
	}
	meta := func(name string, annotations map[string]string) *metav1.PartialObjectMetadata {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, Annotations: annotations}}
	}
	x := newHaltIndex(now)
	x.add("Deployment", meta("canary", halt("configmap/shared", now.Add(-time.Minute))))
	x.add("Deployment", meta("ahead", halt("configmap/later", now.Add(time.Hour))))
	x.add("Deployment", meta("off", map[string]string{contract.WavesAnnotation: contract.WavesOff}))
	x.add("Deployment", meta("typo", map[string]string{contract.WavesAnnotation: "Off"}))
	shared := []Source{{Kind: "ConfigMap", Name: "shared"}, {Kind: "ConfigMap", Name: "later"}}
	for name, want := range map[string]int{"off": 0, "typo": 1, "web": 1} {
		w := &Workload{Kind: "Deployment", Namespace: "shop", Name: name, Sources: shared}
		if got := x.of(w); len(got) != want {
			t.Errorf("of(%s) = %+v, want %d halt(s)", name, got, want)
		}
	}
	sourceOff := &Workload{Kind: "Deployment", Namespace: "shop", Name: "web", Sources: []Source{{Kind: "ConfigMap", Name: "shared", WavesOff: true}}}
	if got := x.of(sourceOff); len(got) != 0 {
		t.Errorf("of(reader of a source with waves off) = %+v, want none", got)
	}
}
