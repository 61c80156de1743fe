package restamp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-logr/logr/funcr"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

// TestCustomWatcherRound: a kind is watched once it is served, and only
// then; a kind not served, misconfigured or failing to start stays pending
// and is tried again, each distinct problem logged once.
func TestCustomWatcherRound(t *testing.T) {
	kind := func(k string) workload.Kind {
		return workload.CustomKind(schema.GroupVersionKind{Group: "e.io", Version: "v1", Kind: k}, "x", []string{"spec", "template"})
	}
	served := map[string]bool{"Ready.e.io": true, "Broken.e.io": true, "Fails.e.io": true}
	probe := func(_ context.Context, k workload.Kind) (bool, error) {
		if k.Name() == "Broken.e.io" {
			return true, fmt.Errorf("%w: no field", ErrBadKind)
		}
		return served[k.Name()], nil
	}
	var started []string
	c := &customWatcher{
		pending: []workload.Kind{kind("Ready"), kind("Later"), kind("Broken"), kind("Fails")},
		probe:   probe,
		start: func(_ context.Context, k workload.Kind) error {
			if k.Name() == "Fails.e.io" {
				return errors.New("no index")
			}
			started = append(started, k.Name())
			return nil
		},
	}
	var lines int
	ctx := log.IntoContext(context.Background(), funcr.New(func(_, _ string) { lines++ }, funcr.Options{}))
	reported := map[string]string{}

	c.pending = c.round(ctx, reported)
	if len(started) != 1 || started[0] != "Ready.e.io" {
		t.Fatalf("started %v, want only Ready", started)
	}
	if len(c.pending) != 3 {
		t.Fatalf("pending %d kinds, want Later, Broken and Fails", len(c.pending))
	}
	first := lines
	c.pending = c.round(ctx, reported)
	if lines != first {
		t.Errorf("the same problems were logged again (%d lines, then %d)", first, lines)
	}

	served["Later.e.io"] = true
	c.pending = c.round(quietCtx(), reported)
	if len(started) != 2 || started[1] != "Later.e.io" || len(c.pending) != 2 {
		t.Errorf("after Later is served: started %v, %d pending", started, len(c.pending))
	}
}

// TestCustomWatcherRefusalIsLoud: a kind the hook refuses to watch gets one
// Warning Event on confighash's pod and the refused gauge at 1; a kind
// still waiting for its CRD, or watched, is at 0, and a refused kind that
// is fixed goes back to 0.
func TestCustomWatcherRefusalIsLoud(t *testing.T) {
	kind := func(k string) workload.Kind {
		return workload.CustomKind(schema.GroupVersionKind{Group: "e.io", Version: "v1", Kind: k}, "x", []string{"spec", "template"})
	}
	broken := true
	probe := func(_ context.Context, k workload.Kind) (bool, error) {
		if k.Name() == "Broken.e.io" && broken {
			return true, fmt.Errorf("%w: template path spec.template: the schema has no field \"spec\" under the root", ErrBadKind)
		}
		return k.Name() != "Later.e.io", nil
	}
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	rec := events.NewFakeRecorder(10)
	self := &corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: "confighash-system", Name: "confighash-0"}
	c := &customWatcher{
		pending: []workload.Kind{kind("Broken"), kind("Later"), kind("Ready")},
		probe:   probe,
		start:   func(context.Context, workload.Kind) error { return nil },
		events:  rec, self: self, metrics: m,
	}
	ctx := quietCtx()
	reported := map[string]string{}
	gauge := func(k string) float64 { return testutil.ToFloat64(m.KindRefused.WithLabelValues(k)) }

	c.pending = c.round(ctx, reported)
	c.pending = c.round(ctx, reported)
	if got := gauge("Broken.e.io"); got != 1 {
		t.Errorf("refused gauge of Broken = %v, want 1", got)
	}
	if got := gauge("Later.e.io") + gauge("Ready.e.io"); got != 0 {
		t.Errorf("refused gauge of kinds not refused = %v, want 0", got)
	}
	if n := len(rec.Events); n != 1 {
		t.Fatalf("%d events after two rounds, want 1", n)
	}
	ev := <-rec.Events
	for _, want := range []string{"Warning", contract.ReasonKindNotWatched, "Broken.e.io", `no field "spec"`, "not re-stamped"} {
		if !strings.Contains(ev, want) {
			t.Errorf("event %q does not say %q", ev, want)
		}
	}

	broken = false
	c.pending = c.round(ctx, reported)
	if got := gauge("Broken.e.io"); got != 0 {
		t.Errorf("refused gauge of Broken once fixed = %v, want 0", got)
	}
}
