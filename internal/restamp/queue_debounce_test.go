package restamp

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

func TestDebounceDue(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tests := map[string]struct {
		changes     []int // ms after t0
		window      time.Duration
		coalesceMax time.Duration
		want        time.Time
	}{
		"one change waits one window":         {changes: []int{0}, window: time.Second, coalesceMax: 10 * time.Second, want: at(1000)},
		"each change extends the window":      {changes: []int{0, 400, 800, 1200, 1600}, window: time.Second, coalesceMax: 10 * time.Second, want: at(2600)},
		"changes that never stop hit the cap": {changes: []int{0, 900, 1800, 2700}, window: time.Second, coalesceMax: 2 * time.Second, want: at(2000)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := newChanges()
			r := Request{KindName: "Deployment"}
			for _, ms := range tc.changes {
				c.touch(r, at(ms), tc.window, tc.coalesceMax)
			}
			got, ok := c.dueAt(r)
			if !ok || !got.Equal(tc.want) {
				t.Errorf("due = %v (%v), want %v", got.Sub(t0), ok, tc.want.Sub(t0))
			}
			c.take(r)
			if _, ok := c.dueAt(r); ok {
				t.Error("take left the window behind")
			}
		})
	}
}

// The window a change is coalesced for never runs past the cap, so due
// needs no clamp of its own: validated options keep the default window
// within it, and windowOf caps any annotation at it.
func TestDebounceWindowWithinCap(t *testing.T) {
	o := DefaultOptions()
	o.CoalesceWindow, o.CoalesceMax = 2*time.Second, 3*time.Second
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for _, v := range []string{"", "1s", "3s", "1m", "-1s", "bad"} {
		ann := map[string]string{}
		if v != "" {
			ann[contract.CoalesceWindowAnnotation] = v
		}
		w, _ := windowOf(ann, o.CoalesceWindow, o.CoalesceMax)
		if w > o.CoalesceMax {
			t.Errorf("%q: window %v above the cap %v", v, w, o.CoalesceMax)
		}
		c := newChanges()
		r := Request{KindName: "Deployment"}
		c.touch(r, t0, w, o.CoalesceMax)
		c.touch(r, t0.Add(2500*time.Millisecond), w, o.CoalesceMax)
		if got, _ := c.dueAt(r); got.After(t0.Add(o.CoalesceMax)) {
			t.Errorf("%q: due %v after the first change, past the cap %v", v, got.Sub(t0), o.CoalesceMax)
		}
	}
}

// countingReconciler counts the re-checks that get past the settler.
type countingReconciler struct{ calls int }

func (c *countingReconciler) Reconcile(context.Context, Request) (reconcile.Result, error) {
	c.calls++
	return reconcile.Result{}, nil
}

// TestBurstSettlesIntoOneRecheck fires five changes 0.4 s apart through the
// real handler and asks the settler whenever the queue would hand the
// workload out: only once the burst has been quiet for the window does it
// get through, and then once.
func TestBurstSettlesIntoOneRecheck(t *testing.T) {
	const window = time.Second
	tests := map[string]struct {
		annotation  string
		every       time.Duration
		changes     int
		coalesceMax time.Duration
		// wantAt is when, after the first change, the re-check gets through.
		wantAt time.Duration
	}{
		"five changes 0.4s apart":           {every: 400 * time.Millisecond, changes: 5, coalesceMax: 10 * time.Second, wantAt: 2600 * time.Millisecond},
		"a source that never settles":       {every: 500 * time.Millisecond, changes: 60, coalesceMax: 3 * time.Second, wantAt: 3 * time.Second},
		"the workload's own window":         {annotation: "2s", every: 400 * time.Millisecond, changes: 5, coalesceMax: 10 * time.Second, wantAt: 3600 * time.Millisecond},
		"a window above the cap is the cap": {annotation: "1h", every: 400 * time.Millisecond, changes: 2, coalesceMax: 5 * time.Second, wantAt: 5 * time.Second},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := quietCtx()
			web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
			web.Spec.Template.Spec = envFromCM("app")
			if tc.annotation != "" {
				web.Annotations = map[string]string{contract.CoalesceWindowAnnotation: tc.annotation}
			}
			b := fake.NewClientBuilder().WithObjects(web)
			b = withReadersIndex(b)
			cache := b.Build()
			t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
			now := t0
			clock := func() time.Time { return now }
			ch := newChanges()
			e := &enqueuer{cache: cache, kinds: newWatched(workload.Kinds().Mutable()...), window: window, coalesceMax: tc.coalesceMax, changes: ch, now: clock}
			next := &countingReconciler{}
			s := &settler{next: next, changes: ch, cache: cache, kinds: newWatched(workload.Kinds().Mutable()...),
				window: window, coalesceMax: tc.coalesceMax, events: events.NewFakeRecorder(10), now: clock}
			req := req("web")
			h := handlerFor[*corev1.ConfigMap](e, hasher.ConfigMap)

			// The queue hands the workload out once per AddAfter delay
			// at the latest; asking every 100 ms is at least as often.
			var passedAt time.Duration = -1
			for step := time.Duration(0); step <= 40*time.Second && passedAt < 0; step += 100 * time.Millisecond {
				now = t0.Add(step)
				if i := int(step / tc.every); step%tc.every == 0 && i < tc.changes {
					old := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"}, Data: map[string]string{"k": fmt.Sprint(i)}}
					cur := &corev1.ConfigMap{ObjectMeta: old.ObjectMeta, Data: map[string]string{"k": fmt.Sprint(i + 1)}}
					h.Update(ctx, event.TypedUpdateEvent[*corev1.ConfigMap]{ObjectOld: old, ObjectNew: cur}, &recordingQueue{})
				}
				if step == 0 {
					continue
				}
				if _, err := s.Reconcile(ctx, req); err != nil {
					t.Fatal(err)
				}
				if next.calls > 0 {
					passedAt = step
					ch.take(req) // as the reconciler does when it re-stamps
				}
			}
			if passedAt != tc.wantAt || next.calls != 1 {
				t.Errorf("re-check got through at %s (%d calls), want once at %s", passedAt, next.calls, tc.wantAt)
			}
		})
	}
}

func TestSettlerWarnsOnBadWindow(t *testing.T) {
	tests := map[string]struct {
		annotation string
		wantWarn   bool
	}{
		"valid":        {annotation: "3s"},
		"not duration": {annotation: "soon", wantWarn: true},
		"negative":     {annotation: "-1s", wantWarn: true},
		"above cap":    {annotation: "1h", wantWarn: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns",
				Annotations: map[string]string{contract.CoalesceWindowAnnotation: tc.annotation}}}
			rec := events.NewFakeRecorder(10)
			ch := newChanges()
			req := req("web")
			now := time.Now()
			ch.touch(req, now.Add(-time.Minute), time.Second, 10*time.Second)
			s := &settler{next: &countingReconciler{}, changes: ch, cache: fake.NewClientBuilder().WithObjects(web).Build(),
				kinds:  newWatched(workload.Kinds().Mutable()...),
				window: time.Second, coalesceMax: 10 * time.Second, events: rec, now: func() time.Time { return now }}
			if _, err := s.Reconcile(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			var got []string
			for len(rec.Events) > 0 {
				got = append(got, <-rec.Events)
			}
			if (len(got) > 0) != tc.wantWarn {
				t.Errorf("events %q, want a warning: %v", got, tc.wantWarn)
			}
		})
	}
}
