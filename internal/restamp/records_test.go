package restamp

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/internal/contract"
)

// webSubject is the Subject of the test Deployment "web" in "ns", whose
// UID the tests set to "uid-web".
var webSubject = contract.Subject{Kind: "Deployment", Namespace: "ns", Name: "web", UID: "uid-web"}

// sealedHold seals a hold for the test Deployment "web".
func sealedHold(h contract.Hold) string { return h.Sealed(hookKey, webSubject) }

// sealedOn seals the hold v (as Hold.String writes it) for the test
// Deployment "web" in "ns", which has no UID.
func sealedOn(t *testing.T, v string) string {
	t.Helper()
	h, err := contract.ParseHold(v)
	if err != nil {
		t.Fatal(err)
	}
	return h.Sealed(hookKey, contract.Subject{Kind: "Deployment", Namespace: "ns", Name: "web"})
}

// holdFixture: Deployment "web" reads configmap/app (k=v2), with stamp and
// the hold annotation hold; a new leader (an empty flap guard) looks at it.
func holdFixture(t *testing.T, stamp, hold string) (client.Client, *reconciler, func() []string) {
	t.Helper()
	ns := servedNS()
	cm := slimCM(t, "ns", "app", map[string]string{"k": "v2"})
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "uid-web",
		Annotations: map[string]string{contract.HoldAnnotation: hold}}}
	d.Spec.Template.Spec = envFromCM("app")
	d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: stamp}
	c := fake.NewClientBuilder().WithObjects(ns, cm, d).Build()
	r, rec := testReconciler(t, c, newFlapGuard(testFlapOptions(), 100), func() time.Time { return t0 })
	return c, r, func() []string { return drainEvents(rec, "") }
}

var webReq = req("web")

// TestHoldRecordNotTheHooks: a hold the hook did not seal for this
// workload (written by hand, or before records were sealed; copied from
// another workload; dated ahead) holds nothing: a stale stamp is
// re-stamped at once, dropping it, with one InvalidAnnotation warning.
// Honoured, it would let anyone who writes the workload keep it from its
// config for good, writing a new hold whenever the last ended.
func TestHoldRecordNotTheHooks(t *testing.T) {
	h := contract.Hold{Since: t0.Add(-time.Hour).Truncate(time.Second), Level: 2, Quiet: 4 * time.Minute}
	other := webSubject
	other.UID = "uid-other"
	for name, tc := range map[string]struct{ hold, problem string }{
		"unsealed":          {h.String(), "is not sealed by confighash"},
		"copied":            {h.Sealed(hookKey, other), "does not verify for this workload"},
		"dated ahead":       {sealedHold(contract.Hold{Since: t0.Add(time.Hour).Truncate(time.Second), Quiet: time.Minute}), "is dated in the future"},
		"too long":          {h.String() + " note=" + strings.Repeat("x", 64<<10), "is too long"},
		"not a hold at all": {"someone's note", "is not sealed"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := quietCtx()
			c, r, drain := holdFixture(t, "v1:stale", tc.hold)
			r.changes.add(webReq, "configmap/app")
			res, err := r.Reconcile(ctx, webReq)
			if err != nil || res.RequeueAfter != 0 {
				t.Fatalf("Reconcile = %+v, %v; want re-stamped, not held", res, err)
			}
			d := &appsv1.Deployment{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "web"}, d); err != nil {
				t.Fatal(err)
			}
			if got := d.Spec.Template.Annotations[contract.ChecksumAnnotation]; got != wantSum(t, map[string]string{"k": "v2"}) {
				t.Errorf("stamp %q: not re-stamped", got)
			}
			if v, ok := d.Annotations[contract.HoldAnnotation]; ok {
				t.Errorf("hold %.60q left after the re-stamp", v)
			}
			events := drain()
			if len(events) != 2 || !strings.HasPrefix(events[0], "Warning InvalidAnnotation confighash.dev/hold "+tc.problem) ||
				!strings.HasPrefix(events[1], "Normal ConfigChanged") || len(events[0]) > 300 {
				t.Errorf("events %.400q; want the warning (%s), then ConfigChanged", events, tc.problem)
			}
		})
	}
}

// TestHoldRecordSealed: the hook's own hold, sealed for the workload, is
// honoured by a new leader, its quiet time capped at --flap-quiet-max
// whatever it says; and a hold the hook writes is sealed.
func TestHoldRecordSealed(t *testing.T) {
	ctx := quietCtx()
	h := contract.Hold{Since: t0.Add(-time.Hour).Truncate(time.Second), Level: 1, Quiet: 100000 * time.Hour}
	c, r, drain := holdFixture(t, "v1:stale", sealedHold(h))
	got := r.holdRecord(ctx, "Deployment", getWeb(t, c))
	if got == nil || got.Quiet != testFlapOptions().FlapMaxQuiet || !got.Since.Equal(h.Since) {
		t.Fatalf("holdRecord = %+v; want the hold with quiet %s", got, testFlapOptions().FlapMaxQuiet)
	}
	r.changes.add(webReq, "configmap/app")
	res, err := r.Reconcile(ctx, webReq)
	if err != nil || res.RequeueAfter != 2*flapQuiet {
		t.Fatalf("Reconcile = %+v, %v; want held for %s", res, err, 2*flapQuiet)
	}
	v := getWeb(t, c).Annotations[contract.HoldAnnotation]
	if _, err := contract.ReadHold(hookKey, webSubject, v, t0, 0); err != nil {
		t.Errorf("the hold the hook wrote, %q: %v", v, err)
	}
	if events := drain(); len(events) != 0 {
		t.Errorf("events %q, want none", events)
	}
}

// TestRecordWarnedOnce: a bad record is reported once, not on every
// reconcile that reads it; a new value is reported again.
func TestRecordWarnedOnce(t *testing.T) {
	ctx := quietCtx()
	c, r, drain := holdFixture(t, wantSum(t, map[string]string{"k": "v2"}), "forged 1")
	for range 5 {
		if _, err := r.Reconcile(ctx, Request{KindName: webReq.KindName, NamespacedName: webReq.NamespacedName, Recheck: true}); err != nil {
			t.Fatal(err)
		}
	}
	d := getWeb(t, c)
	d.Annotations[contract.HoldAnnotation] = "forged 2"
	if err := c.Update(ctx, d); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := r.Reconcile(ctx, Request{KindName: webReq.KindName, NamespacedName: webReq.NamespacedName, Recheck: true}); err != nil {
			t.Fatal(err)
		}
	}
	if events := drain(); len(events) != 2 {
		t.Errorf("events %q; want one warning per bad value", events)
	}
}

// TestRolloutRecordWrittenSealed: the record a re-stamp writes is sealed
// for the workload, and what it lifts of the hook's halt leaves the rest
// sealed; a halt the hook did not seal (unsealed, or copied from another
// workload) holds nothing back and goes with the re-stamp, never sealed.
func TestRolloutRecordWrittenSealed(t *testing.T) {
	ctx := quietCtx()
	a := contract.Change{Source: "configmap/a", Content: "0123456789abcdef"}
	b := contract.Change{Source: "configmap/b", Content: "0123456789abcdef"}
	b2 := contract.Change{Source: "configmap/b", Content: "1123456789abcdef"}
	halt := contract.Halt{Since: t0.Truncate(time.Second), Changes: []contract.Change{a, b}, Reason: "CrashLoopBackOff"}
	other := webSubject
	other.UID = "uid-other"
	for name, tc := range map[string]struct {
		halt string
		kept bool
	}{
		"the hook's halt":  {halt.Sealed(hookKey, webSubject), true},
		"an unsealed halt": {halt.String(), false},
		"a halt copied":    {halt.Sealed(hookKey, other), false},
		"a released halt":  {contract.HaltReleased, false},
	} {
		t.Run(name, func(t *testing.T) {
			c, r, _ := holdFixture(t, "v1:stale", "")
			d := getWeb(t, c)
			delete(d.Annotations, contract.HoldAnnotation)
			d.Annotations[contract.HaltAnnotation] = tc.halt
			rec := &contract.Rollout{Since: t0.Truncate(time.Second), Changes: []contract.Change{b2}, Read: []contract.Change{a, b2}}
			kind, _ := r.kinds.get("Deployment")
			tmpl, _ := kind.PodTemplate(d)
			if err := r.patch(ctx, "Deployment", d, tmpl, "v2:x", rec); err != nil {
				t.Fatal(err)
			}
			d = getWeb(t, c)
			got, err := contract.ReadRollout(hookKey, webSubject, d.Annotations[contract.RolloutAnnotation], t0)
			if err != nil || !got.Has(b2) {
				t.Errorf("rollout record %q: %+v, %v", d.Annotations[contract.RolloutAnnotation], got, err)
			}
			v, has := d.Annotations[contract.HaltAnnotation]
			if !tc.kept {
				if has {
					t.Errorf("halt left %q; want none", v)
				}
				return
			}
			h, err := contract.ReadHalt(hookKey, webSubject, v, t0)
			if err != nil || !h.Has(a) || h.Has(b) {
				t.Errorf("halt left %q: %+v, %v; want %s only, sealed", v, h, err, a)
			}
		})
	}
}

func getWeb(t *testing.T, c client.Client) *appsv1.Deployment {
	t.Helper()
	d := &appsv1.Deployment{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "web"}, d); err != nil {
		t.Fatal(err)
	}
	return d
}
