package restamp

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/preview"
	"github.com/confighash/confighash/internal/status"
	"github.com/confighash/confighash/internal/status/statustest"
	"github.com/confighash/confighash/internal/workload"
)

// The shared-meaning test: the same objects go to the hook (its reconciles,
// a new leader that knows only the objects), to `preview` (Gather and
// Compute) and to `status` (Collect and Classify), and all three must give
// the same answer for the reader under test, d1. The scenario is the waves
// fixture's: d0, d1 and d2 read configmap/app, which changed; d0, the
// canary, was re-stamped and rolled out; then each row sets its annotation.

// heldBack is what keeps d1 from its re-stamp when its wave comes.
type heldBack string

const (
	goes   heldBack = ""     // nothing: it is re-stamped in its turn
	byHalt heldBack = "halt" // d0's halt holds the change back from it
	byHold heldBack = "hold" // its own flap hold
	// byWindow: a closed rollout window holds it (wave_window.go).
	byWindow heldBack = "window"
)

// meaningAnswer is one consumer's answer for d1.
type meaningAnswer struct {
	heldBack heldBack
	// first: d1 goes before d2's wave (its rollout-order puts it first).
	// Status shows no order, so it does not answer it.
	first bool
}

// meaningRow is one annotation value on one object.
type meaningRow struct {
	name string
	// annotation is the README row the case covers.
	annotation string
	// on is where it goes: "reader" (d1), "canary" (d0) or "source".
	on string
	// value builds the value from the fixture (for records sealed for an
	// object, or naming the canary's change).
	value func(m *meaningFixture) string
	// haltOnCanary also gives d0 the hook's own halt of the change, so that
	// whether a halt holds d1 back shows.
	haltOnCanary bool
	// sourceWavesOff also puts waves=off on the source, so that d1 is due at
	// once and only its hold can keep it.
	sourceWavesOff bool
	// readerWindowClosed also gives d1 a closed window, so that whether
	// an urgent source lets the change through shows.
	readerWindowClosed bool
	want               meaningAnswer
	// keyOnly: a forgery only confighash's key tells. status and preview
	// have no key: they take the record as the hook's (and say it is
	// unverified), so their answer is unverified's.
	keyOnly    bool
	unverified meaningAnswer
}

// otherChange is a change of another source that every halt below names
// too: preview shows a halt by what it keeps its own workload from (a
// change of another source), since the change it previews supersedes the
// halted one of its own source.
var otherChange = contract.Change{Source: "secret/other", Content: "0123456789abcdef"}

func fixed(v string) func(*meaningFixture) string { return func(*meaningFixture) string { return v } }

// closedWindow is a window open only on the weekday three days from now,
// in UTC: closed while the test runs, whatever day it runs on.
func closedWindow(m *meaningFixture) string {
	return m.now.UTC().AddDate(0, 0, 3).Weekday().String()[:3] + " 00:00-24:00 UTC"
}

// meaningRows covers every README annotation that affects waves, halts and
// holds (TestMeaningRowsCoverTheReadme), with valid, invalid and forged
// values.
func meaningRows() []meaningRow {
	halt := func(m *meaningFixture) contract.Halt {
		return contract.Halt{Since: m.now.Add(-time.Minute).Truncate(time.Second), Changes: []contract.Change{m.change, otherChange}, Reason: "CrashLoopBackOff"}
	}
	hold := func(m *meaningFixture) contract.Hold {
		return contract.Hold{Since: m.now.Add(-time.Minute).Truncate(time.Second), Level: 0, Quiet: 10 * time.Minute}
	}
	return []meaningRow{
		{name: "waves off on the reader: no halt holds it back", annotation: contract.WavesAnnotation, on: "reader",
			value: fixed(contract.WavesOff), haltOnCanary: true, want: meaningAnswer{heldBack: goes}},
		{name: "waves Off on the reader (invalid: case)", annotation: contract.WavesAnnotation, on: "reader",
			value: fixed("Off"), haltOnCanary: true, want: meaningAnswer{heldBack: byHalt}},
		{name: "waves 'off ' on the reader (invalid: space)", annotation: contract.WavesAnnotation, on: "reader",
			value: fixed("off "), haltOnCanary: true, want: meaningAnswer{heldBack: byHalt}},
		{name: "waves false on the reader (invalid)", annotation: contract.WavesAnnotation, on: "reader",
			value: fixed("false"), haltOnCanary: true, want: meaningAnswer{heldBack: byHalt}},
		{name: "waves off on the source: the halted change goes to all", annotation: contract.WavesAnnotation, on: "source",
			value: fixed(contract.WavesOff), haltOnCanary: true, want: meaningAnswer{heldBack: goes}},
		{name: "waves OFF on the source (invalid: case)", annotation: contract.WavesAnnotation, on: "source",
			value: fixed("OFF"), haltOnCanary: true, want: meaningAnswer{heldBack: byHalt}},

		{name: "rollout-order -1 puts the reader first", annotation: contract.RolloutOrderAnnotation, on: "reader",
			value: fixed("-1"), want: meaningAnswer{first: true}},
		{name: "rollout-order ' -1 ' (spaces trimmed)", annotation: contract.RolloutOrderAnnotation, on: "reader",
			value: fixed(" -1 "), want: meaningAnswer{first: true}},
		{name: "rollout-order 1 (after the others)", annotation: contract.RolloutOrderAnnotation, on: "reader",
			value: fixed("1"), want: meaningAnswer{}},
		{name: "rollout-order first (invalid: sorts as 0)", annotation: contract.RolloutOrderAnnotation, on: "reader",
			value: fixed("first"), want: meaningAnswer{}},
		{name: "rollout-order past int (invalid: sorts as 0)", annotation: contract.RolloutOrderAnnotation, on: "reader",
			value: fixed("-99999999999999999999"), want: meaningAnswer{}},

		{name: "halt sealed for the canary", annotation: contract.HaltAnnotation, on: "canary",
			value: func(m *meaningFixture) string { return halt(m).Sealed(hookKey, m.subject("d0")) }, want: meaningAnswer{heldBack: byHalt}},
		{name: "halt released", annotation: contract.HaltAnnotation, on: "canary",
			value: fixed(contract.HaltReleased), want: meaningAnswer{heldBack: goes}},
		{name: "halt Released (invalid: case; not sealed)", annotation: contract.HaltAnnotation, on: "canary",
			value: fixed("Released"), want: meaningAnswer{heldBack: goes}},
		{name: "halt written by hand (no seal)", annotation: contract.HaltAnnotation, on: "canary",
			value: func(m *meaningFixture) string { return halt(m).String() }, want: meaningAnswer{heldBack: goes}},
		{name: "halt sealed but unreadable", annotation: contract.HaltAnnotation, on: "canary",
			value: func(m *meaningFixture) string {
				return strings.Replace(halt(m).Sealed(hookKey, m.subject("d0")), "since=", "since=x", 1)
			}, want: meaningAnswer{heldBack: goes}},
		{name: "halt dated an hour ahead", annotation: contract.HaltAnnotation, on: "canary",
			value: func(m *meaningFixture) string {
				h := halt(m)
				h.Since = m.now.Add(time.Hour).Truncate(time.Second)
				return h.Sealed(hookKey, m.subject("d0"))
			}, want: meaningAnswer{heldBack: goes}},
		{name: "halt longer than a record may be", annotation: contract.HaltAnnotation, on: "canary",
			value: func(m *meaningFixture) string {
				h := halt(m)
				h.Changes = h.Changes[:1]
				h.Reason = strings.Repeat("X", 17<<10)
				return h.Sealed(hookKey, m.subject("d0"))
			}, want: meaningAnswer{heldBack: goes}},
		{name: "halt copied from another workload (forged)", annotation: contract.HaltAnnotation, on: "canary",
			value: func(m *meaningFixture) string { return halt(m).Sealed(hookKey, m.subject("d2")) },
			want:  meaningAnswer{heldBack: goes}, keyOnly: true, unverified: meaningAnswer{heldBack: byHalt}},
		{name: "halt sealed under another key (forged)", annotation: contract.HaltAnnotation, on: "canary",
			value: func(m *meaningFixture) string { return halt(m).Sealed([]byte("not-the-key"), m.subject("d0")) },
			want:  meaningAnswer{heldBack: goes}, keyOnly: true, unverified: meaningAnswer{heldBack: byHalt}},

		{name: "window closed on the reader", annotation: contract.WindowAnnotation, on: "reader",
			value: closedWindow, want: meaningAnswer{heldBack: byWindow}},
		{name: "window always on the reader", annotation: contract.WindowAnnotation, on: "reader",
			value: fixed("always"), want: meaningAnswer{heldBack: goes}},
		{name: "window weekdays on the reader (invalid: ignored)", annotation: contract.WindowAnnotation, on: "reader",
			value: fixed("weekdays"), want: meaningAnswer{heldBack: goes}},
		{name: "window closed on the source narrows the reader's", annotation: contract.WindowAnnotation, on: "source",
			value: closedWindow, want: meaningAnswer{heldBack: byWindow}},
		{name: "freeze on the reader (read on namespaces only)", annotation: contract.FreezeAnnotation, on: "reader",
			value: fixed("2020-01-01/2099-12-31 UTC"), want: meaningAnswer{heldBack: goes}},
		{name: "urgent on the source goes through the reader's closed window", annotation: contract.UrgentAnnotation, on: "source",
			value: fixed("INC-1"), readerWindowClosed: true, want: meaningAnswer{heldBack: goes}},
		{name: "urgent on the reader (read on sources only)", annotation: contract.UrgentAnnotation, on: "reader",
			value: fixed("INC-1"), readerWindowClosed: true, want: meaningAnswer{heldBack: byWindow}},

		{name: "hold sealed for the reader", annotation: contract.HoldAnnotation, on: "reader", sourceWavesOff: true,
			value: func(m *meaningFixture) string { return hold(m).Sealed(hookKey, m.subject("d1")) }, want: meaningAnswer{heldBack: byHold}},
		{name: "hold written by hand (no seal)", annotation: contract.HoldAnnotation, on: "reader", sourceWavesOff: true,
			value: func(m *meaningFixture) string { return hold(m).String() }, want: meaningAnswer{heldBack: goes}},
		{name: "hold sealed but unreadable", annotation: contract.HoldAnnotation, on: "reader", sourceWavesOff: true,
			value: func(m *meaningFixture) string {
				return strings.Replace(hold(m).Sealed(hookKey, m.subject("d1")), "quiet=", "quiet=x", 1)
			}, want: meaningAnswer{heldBack: goes}},
		{name: "hold dated an hour ahead", annotation: contract.HoldAnnotation, on: "reader", sourceWavesOff: true,
			value: func(m *meaningFixture) string {
				h := hold(m)
				h.Since = m.now.Add(time.Hour).Truncate(time.Second)
				return h.Sealed(hookKey, m.subject("d1"))
			}, want: meaningAnswer{heldBack: goes}},
		{name: "hold copied from another workload (forged)", annotation: contract.HoldAnnotation, on: "reader", sourceWavesOff: true,
			value: func(m *meaningFixture) string { return hold(m).Sealed(hookKey, m.subject("d2")) },
			want:  meaningAnswer{heldBack: goes}, keyOnly: true, unverified: meaningAnswer{heldBack: byHold}},
	}
}

// meaningFixture is the waves fixture after the canary's rollout, with
// the change it went to.
type meaningFixture struct {
	*wavesFixture
	now    time.Time
	change contract.Change
}

// subject is the workload named, as its records' MACs bind it.
func (m *meaningFixture) subject(name string) contract.Subject {
	d := &appsv1.Deployment{}
	_ = m.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: name}, d)
	return subjectOf("Deployment", d)
}

// setAnnotation sets key=value on obj (by its name) in the hook's client.
func (m *meaningFixture) setAnnotation(t *testing.T, obj client.Object, key, value string) {
	t.Helper()
	annotateIn(t, m.c, obj, key, value)
}

func newMeaningFixture(t *testing.T, row meaningRow) *meaningFixture {
	t.Helper()
	m := &meaningFixture{wavesFixture: newWavesFixture(t, 3), now: time.Now()}
	m.reconcile(t, "d0")
	m.setStatus(t, true, false)
	rec, err := contract.ReadRollout(hookKey, m.subject("d0"), m.get(t, "d0").Annotations[contract.RolloutAnnotation], m.now)
	if err != nil || len(rec.Changes) != 1 {
		t.Fatalf("the canary's record: %+v, %v", rec, err)
	}
	m.change = rec.Changes[0]
	d := func(name string) client.Object {
		return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	}
	source := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app"}}
	if row.haltOnCanary {
		h := contract.Halt{Since: m.now.Add(-time.Minute).Truncate(time.Second), Changes: []contract.Change{m.change, otherChange}, Reason: "CrashLoopBackOff"}
		m.setAnnotation(t, d("d0"), contract.HaltAnnotation, h.Sealed(hookKey, m.subject("d0")))
	}
	if row.sourceWavesOff {
		m.setAnnotation(t, source, contract.WavesAnnotation, contract.WavesOff)
	}
	if row.readerWindowClosed {
		m.setAnnotation(t, d("d1"), contract.WindowAnnotation, closedWindow(m))
	}
	target := map[string]client.Object{"reader": d("d1"), "canary": d("d0"), "source": source}[row.on]
	m.setAnnotation(t, target, row.annotation, row.value(m))
	return m
}

// hookAnswer: a new leader, which knows only the objects, looks at d1, at
// the canary, and at d1 and d2 again.
func hookAnswer(t *testing.T, m *meaningFixture) meaningAnswer {
	m.woken = nil
	m.r.planner = newPlanner(8, 0, func(r Request) { m.woken = append(m.woken, r.Name) })
	m.r.flaps = newFlapGuard(DefaultOptions(), 100)
	m.r.waits = newWindowWaits()
	for _, name := range []string{"d1", "d0", "d1", "d2"} {
		m.reconcile(t, name)
	}
	got := m.restamped(t, 3)
	d1, d2 := slices.Contains(got, "d1"), slices.Contains(got, "d2")
	switch {
	case !d1 && len(m.drained(contract.ReasonWaitingForWindow)) > 0:
		return meaningAnswer{heldBack: byWindow}
	case !d1 && d2:
		return meaningAnswer{heldBack: byHold}
	case !d1:
		return meaningAnswer{heldBack: byHalt}
	}
	return meaningAnswer{first: !d2 && !m.halted(t)}
}

// halted: the canary carries a halt the hook honours (then d2 waits on it,
// not on d1).
func (m *meaningFixture) halted(t *testing.T) bool {
	_, ok := m.r.haltRecord(context.Background(), "Deployment", m.get(t, "d0"))
	return ok
}

// cliObjects are the objects as the hook's client holds them, for the
// CLIs' own fake client, with the source's content unslimmed (preview
// reads it; status reads its metadata only).
func cliObjects(t *testing.T, m *meaningFixture, data string) []client.Object {
	src := &corev1.ConfigMap{}
	if err := m.c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "app"}, src); err != nil {
		t.Fatal(err)
	}
	live := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "app", Annotations: map[string]string{}}, Data: map[string]string{"k": data}}
	for k, v := range src.Annotations {
		if !strings.HasPrefix(k, "!") {
			live.Annotations[k] = v
		}
	}
	objs := []client.Object{servedNS(), live}
	for _, name := range []string{"d0", "d1", "d2"} {
		d := m.get(t, name)
		d.ResourceVersion = ""
		objs = append(objs, d)
	}
	return objs
}

// previewAnswer previews the source's next change (as the live one, with
// other content) and reads d1's row and the canary's.
func previewAnswer(t *testing.T, m *meaningFixture) meaningAnswer {
	return previewAnswerWith(t, m, 8)
}

// previewAnswerWith is previewAnswer for a hook with --max-wave-size maxWave.
func previewAnswerWith(t *testing.T, m *meaningFixture, maxWave int) meaningAnswer {
	objs := cliObjects(t, m, "v2")
	c := statustest.NewClient(t, objs...)
	next := objs[1].DeepCopyObject().(*corev1.ConfigMap)
	next.Data = map[string]string{"k": "v3"}
	f, err := preview.Gather(context.Background(), c, &preview.Input{Source: hasher.Source{Kind: hasher.ConfigMap, Name: "app"}, Namespace: "ns", Object: next}, "ns",
		preview.Options{Kinds: workload.Kinds(), Policy: injection.New("confighash-system")})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := preview.Compute(f, []byte("preview-key"), maxWave)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]preview.Rolling{}
	for _, r := range rep.Rolling {
		rows[r.Name] = r
	}
	d0, d1 := rows["d0"], rows["d1"]
	if d1.Name == "" {
		t.Fatalf("preview: d1 does not roll: %+v", rep)
	}
	switch {
	case d1.Later:
		return meaningAnswer{heldBack: byWindow}
	case strings.Contains(d1.Waits, "flap hold"):
		return meaningAnswer{heldBack: byHold}
	case !d1.AtOnce && d0.Waits != "":
		return meaningAnswer{heldBack: byHalt}
	}
	return meaningAnswer{first: d1.Wave == 1}
}

// statusAnswer reports on the namespace, with the stamp the sources give
// now being the canary's.
func statusAnswer(t *testing.T, m *meaningFixture) meaningAnswer {
	return statusAnswerWith(t, m, false)
}

// statusAnswerWith is statusAnswer for a hook without waves when noWaves.
func statusAnswerWith(t *testing.T, m *meaningFixture, noWaves bool) meaningAnswer {
	c := statustest.NewClient(t, cliObjects(t, m, "v2")...)
	rep, err := status.Collect(context.Background(), c, status.Options{Namespace: "ns", Kinds: workload.Kinds(), Stamper: fixedStamper(m.cur), NoWaves: noWaves})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range rep.Workloads {
		if w.Name != "d1" {
			continue
		}
		switch {
		case w.State == status.StateWaiting && w.Window != nil:
			return meaningAnswer{heldBack: byWindow}
		}
		switch w.State {
		case status.StateWaiting:
			return meaningAnswer{heldBack: byHalt}
		case status.StateHeld:
			return meaningAnswer{heldBack: byHold}
		case status.StateStale:
			return meaningAnswer{}
		}
		t.Fatalf("status: d1 is %s (%s)", w.State, w.Reason)
	}
	t.Fatalf("status: no d1 in %+v", rep.Workloads)
	return meaningAnswer{}
}

type fixedStamper string

func (s fixedStamper) Stamp(context.Context, client.Object) (string, []string, error) {
	return string(s), nil, nil
}

func TestAnnotationsMeanTheSameToHookPreviewAndStatus(t *testing.T) {
	for _, row := range meaningRows() {
		t.Run(row.name, func(t *testing.T) {
			wantCLI := row.want
			if row.keyOnly {
				wantCLI = row.unverified
			}
			// Each on its own objects: the hook writes as it goes.
			if got := hookAnswer(t, newMeaningFixture(t, row)); got != row.want {
				t.Errorf("hook: %+v, want %+v", got, row.want)
			}
			// Preview answers for the source's next change, which the
			// canary's halt of this one holds back from no reader: the new
			// content supersedes it (docs/waves.md, "Lifting a halt"). So
			// where the hook holds d1 back by that halt, preview puts d1 in
			// its wave after the canary.
			wantPreview := wantCLI
			if wantPreview.heldBack == byHalt {
				wantPreview = meaningAnswer{heldBack: goes}
			}
			if got := previewAnswer(t, newMeaningFixture(t, row)); got != wantPreview {
				t.Errorf("preview: %+v, want %+v", got, wantPreview)
			}
			got := statusAnswer(t, newMeaningFixture(t, row))
			got.first = wantCLI.first // status shows no order
			if got != wantCLI {
				t.Errorf("status: %+v, want %+v", got, wantCLI)
			}
		})
	}
}

// With --max-wave-size=0 the hook runs no waves, and so no halt holds a
// reader back: the canary's halt keeps d1 from nothing, and preview and
// status say so when told (status reads the published max-wave-size).
func TestWithoutWavesNoHaltHoldsAnyoneBack(t *testing.T) {
	row := meaningRow{annotation: contract.RolloutOrderAnnotation, on: "reader", value: fixed("1"), haltOnCanary: true}
	m := newMeaningFixture(t, row)
	if got := statusAnswerWith(t, m, false); got.heldBack != byHalt {
		t.Fatalf("with waves, status: %+v; want d1 held back by the canary's halt", got)
	}
	if got := previewAnswerWith(t, m, 0); got.heldBack != goes {
		t.Errorf("preview without waves: %+v; want d1 at once", got)
	}
	if got := statusAnswerWith(t, m, true); got.heldBack != goes {
		t.Errorf("status without waves: %+v; want d1 stale, held back by nothing", got)
	}
	m.r.planner = nil // as Setup leaves it for --max-wave-size=0
	m.reconcile(t, "d1")
	if !slices.Contains(m.restamped(t, 3), "d1") {
		t.Errorf("the hook without waves did not re-stamp d1")
	}
}
