package app

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/sources"
)

// countingReader counts the reads that reach it, and finds every object.
type countingReader struct{ gets int }

func (r *countingReader) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	r.gets++
	return nil
}

func (r *countingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return nil
}

// TestManagerClientReadsUnstructuredFromCache: the hook reads a Rollout
// through the manager's client; that read must go to the cache, since
// confighash is granted no get on workloads. The client points at an
// address where nothing listens, so a live read would fail.
func TestManagerClientReadsUnstructuredFromCache(t *testing.T) {
	sc := &sourceCache{fills: sources.NewFills()}
	cache := &countingReader{}
	c, err := sc.newClient(&rest.Config{Host: "http://127.0.0.1:1"}, client.Options{Cache: &client.CacheOptions{Reader: cache}})
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"})
	if err := c.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: "web"}, u); err != nil {
		t.Fatalf("reading a Rollout: %v", err)
	}
	if cache.gets != 1 {
		t.Fatalf("%d reads reached the cache, want 1", cache.gets)
	}
}
