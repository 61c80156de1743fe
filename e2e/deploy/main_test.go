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

// renderCache holds renders made once for every test of the run that
// wants them, as allRenders does for the plain ones.
type renderCache struct {
	once    sync.Once
	renders []Render
	err     error
}

func (c *renderCache) get(t *testing.T, render func(context.Context, Paths) ([]Render, error)) []Render {
	t.Helper()
	_, p := allRenders(t)
	c.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		c.renders, c.err = render(ctx, p)
	})
	if c.err != nil {
		t.Fatal(c.err)
	}
	return c.renders
}

// chartMatchesKustomize: for each cert mode, the chart render and the
// overlay with the component render the same objects.
func chartMatchesKustomize(t *testing.T, rs []Render, component string) {
	t.Helper()
	for _, m := range CertModes {
		t.Run(m.Overlay, func(t *testing.T) {
			k := renderNamed(t, rs, "kustomize/"+m.Overlay+"+"+component)
			h := renderNamed(t, rs, "helm/"+m.ChartMode+"+"+component)
			sameObjects(t, "component", index(t, k.Objects), index(t, h.Objects))
		})
	}
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
