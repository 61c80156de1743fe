package restamp

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/workload"
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
	c.pending = c.round(log.IntoContext(context.Background(), logr.Discard()), reported)
	if len(started) != 2 || started[1] != "Later.e.io" || len(c.pending) != 2 {
		t.Errorf("after Later is served: started %v, %d pending", started, len(c.pending))
	}
}
