package deploy

import (
	"context"
	"sync"
	"testing"
	"time"
)

// The renders are shared by the tests: kubectl kustomize and the chart take
// a moment each.
var (
	rendersOnce sync.Once
	renders     []Render
	paths       Paths
	rendersErr  error
)

func allRenders(t *testing.T) ([]Render, Paths) {
	t.Helper()
	rendersOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if paths, rendersErr = FindPaths(); rendersErr != nil {
			return
		}
		renders, rendersErr = RenderAll(ctx, paths)
	})
	if rendersErr != nil {
		t.Fatal(rendersErr)
	}
	return renders, paths
}

// renderNamed is the render of rs called name; the test fails without one.
func renderNamed(t *testing.T, rs []Render, name string) Render {
	t.Helper()
	for _, r := range rs {
		if r.Name == name {
			return r
		}
	}
	t.Fatalf("no render %s", name)
	return Render{}
}

func rendersByName(t *testing.T) map[string]Render {
	rs, _ := allRenders(t)
	m := map[string]Render{}
	for _, r := range rs {
		m[r.Name] = r
	}
	return m
}
