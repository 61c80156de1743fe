package restamp

import (
	"context"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/window"
)

// windowRecheck is the longest a reader waiting for a window or a freeze
// sleeps: a namespace's freeze or window edited meanwhile (the hook does
// not watch namespaces) is seen within it. The workload's and the sources'
// own annotations wake it at once (event_enqueue.go).
const windowRecheck = 10 * time.Minute

// windowInputs is what window.Decide needs for a re-stamp of obj for
// changes to sources (as "configmap/NAME"): the annotations of obj, of its
// namespace (given: the policy read them) and of each source, from the
// cache (a source's copy keeps its window and urgent annotations).
func (r *reconciler) windowInputs(ctx context.Context, obj client.Object, namespace map[string]string, changed []string) window.Inputs {
	in := window.Inputs{Workload: obj.GetAnnotations(), Namespace: namespace, Cluster: r.windows, Sources: map[string]map[string]string{}}
	for _, name := range changed {
		in.Sources[name] = r.sourceAnnotations(ctx, obj.GetNamespace(), name)
	}
	return in
}

// windowClosed returns whether a reader's window is closed (or a freeze
// holds it) now for a change of source, reading the namespace and the
// source once for all the readers of a plan. An urgent source holds none.
func (r *reconciler) windowClosed(ctx context.Context, namespace, source string) func(client.Object) bool {
	in := window.Inputs{Namespace: r.namespaceAnnotations(ctx, namespace), Cluster: r.windows,
		Sources: map[string]map[string]string{source: r.sourceAnnotations(ctx, namespace, source)}}
	now := r.now()
	return func(obj client.Object) bool {
		in.Workload = obj.GetAnnotations()
		return !window.Decide(in, now).Go
	}
}

// namespaceAnnotations are the cached annotations of namespace, nil when
// it cannot be read.
func (r *reconciler) namespaceAnnotations(ctx context.Context, namespace string) map[string]string {
	ns := &corev1.Namespace{}
	if err := r.client.Get(ctx, client.ObjectKey{Name: namespace}, ns); err != nil {
		return nil
	}
	return ns.Annotations
}

// sourceAnnotations are the cached annotations of source ("configmap/NAME"),
// nil when it cannot be read.
func (r *reconciler) sourceAnnotations(ctx context.Context, namespace, source string) map[string]string {
	src, err := hasher.ParseSource(source)
	if err != nil {
		return nil
	}
	obj, err := sources.NewObject(src.Kind)
	if err != nil || r.client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: src.Name}, obj) != nil {
		return nil
	}
	return obj.GetAnnotations()
}

// windowGate is the window stage of the gate: may changes to changed start
// rolling obj now? When not, it answers when to look again, says so once
// in an Event, and counts the reader as waiting. An urgent source that
// lets the change through is reported on obj, once per reader and source.
func (r *reconciler) windowGate(ctx context.Context, req Request, obj client.Object, namespace map[string]string, changed []string) (reconcile.Result, bool) {
	now := r.now()
	d := window.Decide(r.windowInputs(ctx, obj, namespace, changed), now)
	for _, w := range d.Warnings {
		if r.waits.warnOnce(identity(req), w.Error()) {
			r.events.Eventf(obj, nil, corev1.EventTypeWarning, contract.ReasonInvalidAnnotation, "Restamp", "%s", w.Error())
		}
	}
	if d.Go {
		r.waits.open(identity(req))
		for _, src := range d.Urgent {
			if r.waits.urgentOnce(identity(req), src) {
				r.reportUrgent(ctx, obj, src)
			}
		}
		return reconcile.Result{}, false
	}
	after := windowRecheck
	when := "not within the schedules' next year"
	if !d.Until.IsZero() {
		after = min(max(d.Until.Sub(now), time.Second), windowRecheck)
		when = "at " + d.Until.UTC().Format(time.RFC3339)
	}
	why := d.Why()
	if r.waits.wait(identity(req), why, now, d.Held.Frozen) {
		r.events.Eventf(obj, nil, corev1.EventTypeNormal, contract.ReasonWaitingForWindow, "Restamp",
			"config change (%s) waits: %s; it may start %s", strings.Join(changed, ", "), why, when)
	}
	log.FromContext(ctx).V(1).Info("waiting for a window", "why", why, "until", d.Until)
	return reconcile.Result{RequeueAfter: after}, true
}

// maxUrgentNote bounds the part of an urgent annotation's value an Event
// repeats.
const maxUrgentNote = 128

// reportUrgent says, on obj, that source's urgent annotation lets a change
// through, with its note and who set it: the field manager that owns the
// annotation, read live from the source's managedFields (which the cache
// does not keep).
func (r *reconciler) reportUrgent(ctx context.Context, obj client.Object, source string) {
	note, by := "", "a field manager the API does not name"
	if src, err := hasher.ParseSource(source); err == nil && r.live != nil {
		live, err := sources.NewObject(src.Kind)
		if err == nil && r.live.Get(ctx, client.ObjectKey{Namespace: obj.GetNamespace(), Name: src.Name}, live) == nil {
			note = live.GetAnnotations()[contract.UrgentAnnotation]
			if m := urgentSetBy(live); m != "" {
				by = m
			}
		}
	}
	if len(note) > maxUrgentNote {
		note = note[:maxUrgentNote] + "…"
	}
	r.events.Eventf(obj, nil, corev1.EventTypeWarning, contract.ReasonUrgentChange, "Restamp",
		"%s is marked %s (%q, set by %s): its change goes now, through closed windows and freezes", source, contract.UrgentAnnotation, note, by)
}

// urgentSetBy names the field manager (and when) that set obj's urgent
// annotation, "" when none of its managedFields entries owns it.
func urgentSetBy(obj client.Object) string {
	field := `"f:` + contract.UrgentAnnotation + `"`
	for _, e := range obj.GetManagedFields() {
		if e.FieldsV1 != nil && strings.Contains(e.FieldsV1.GetRawString(), field) {
			when := ""
			if e.Time != nil {
				when = " at " + e.Time.UTC().Format(time.RFC3339)
			}
			return e.Manager + " (" + string(e.Operation) + when + ")"
		}
	}
	return ""
}

// windowWaits remembers the readers waiting for a window or a freeze on
// this replica: what the metrics count, and what has been said, so that
// an Event is not repeated at each look. One entry per reader at most,
// gone when the reader stops waiting (Reconcile calls done). A nil one
// remembers nothing and says everything.
type windowWaits struct {
	mu sync.Mutex
	m  map[Request]windowWait
}

// maxSaid bounds what is remembered as said for one reader.
const maxSaid = 16

type windowWait struct {
	since  time.Time
	why    string
	frozen bool
	// said: the urgent sources reported, and the warnings given.
	said map[string]bool
}

func newWindowWaits() *windowWaits { return &windowWaits{m: map[Request]windowWait{}} }

// wait records r as waiting for why; true when that is news (it was not
// waiting, or waited for something else).
func (w *windowWaits) wait(r Request, why string, now time.Time, frozen bool) bool {
	if w == nil {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	old, ok := w.m[r]
	if ok && old.since.IsZero() {
		ok = false
	}
	if ok && old.why == why {
		return false
	}
	since := now
	if ok {
		since = old.since
	}
	w.m[r] = windowWait{since: since, why: why, frozen: frozen, said: old.said}
	return true
}

// urgentOnce and warnOnce report whether source's urgent pass, or warning,
// has not been said for r yet, and remember it.
func (w *windowWaits) urgentOnce(r Request, source string) bool { return w.once(r, "urgent "+source) }
func (w *windowWaits) warnOnce(r Request, warning string) bool  { return w.once(r, "warn "+warning) }

func (w *windowWaits) once(r Request, what string) bool {
	if w == nil {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	e := w.m[r]
	if e.said[what] {
		return false
	}
	if len(e.said) >= maxSaid {
		// A tenant rewriting a bad annotation again and again is told
		// each time rather than remembered without bound.
		return true
	}
	if e.said == nil {
		e.said = map[string]bool{}
	}
	e.said[what] = true
	w.m[r] = e
	return true
}

// open records that r's window is open: it waits no more for it (it may
// still wait for its wave), and what was said stays said.
func (w *windowWaits) open(r Request) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if e, ok := w.m[r]; ok {
		e.since, e.why, e.frozen = time.Time{}, "", false
		w.m[r] = e
	}
}

// done forgets r: the change it waited for is behind it (re-stamped,
// current, gone).
func (w *windowWaits) done(r Request) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.m, r)
}

// counts are the readers waiting for a window and for a freeze, and the
// longest wait now.
func (w *windowWaits) counts(now time.Time) (windows, freezes int, longest time.Duration) {
	if w == nil {
		return 0, 0, 0
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.m {
		if e.since.IsZero() {
			continue
		}
		if e.frozen {
			freezes++
		} else {
			windows++
		}
		longest = max(longest, now.Sub(e.since))
	}
	return windows, freezes, longest
}
