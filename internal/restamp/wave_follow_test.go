package restamp

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
)

// A canary re-stamped mid-rollout for a source whose waves are off (so
// outside the planner) is judged on its new stamp, whose pods carry the
// change it is the canary of too: its success moves the waves on. Judged
// on the stamp it replaced, it would read "NotStamped" until
// --rollout-timeout and then halt the change, leaving the next wave
// behind. (Seen in the pinning soak on the node.)
func TestCanaryRestampedOutsideTheWavesIsJudgedOnItsNewStamp(t *testing.T) {
	f := newWavesFixture(t, 3)
	flags := &corev1.ConfigMap{Data: map[string]string{"f": "1"}}
	flags.Namespace, flags.Name = "ns", "flags"
	flags.Annotations = map[string]string{contract.WavesAnnotation: contract.WavesOff}
	if err := f.c.Create(context.Background(), slimmed(t, flags)); err != nil {
		t.Fatal(err)
	}
	d0 := f.get(t, "d0")
	d0.Spec.Template.Spec.Containers[0].EnvFrom = append(d0.Spec.Template.Spec.Containers[0].EnvFrom,
		corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "flags"}}})
	f.put(t, d0)
	f.reconcile(t, "d0", "d1", "d2")
	canary := f.get(t, "d0").Spec.Template.Annotations[contract.ChecksumAnnotation]
	if canary == f.old || f.get(t, "d1").Spec.Template.Annotations[contract.ChecksumAnnotation] != f.old {
		t.Fatal("want the canary d0 re-stamped alone")
	}
	f.setStatus(t, false, false)

	// flags changes while the canary rolls: d0 goes again at once.
	flags = &corev1.ConfigMap{Data: map[string]string{"f": "2"}}
	flags.Namespace, flags.Name = "ns", "flags"
	flags.Annotations = map[string]string{contract.WavesAnnotation: contract.WavesOff}
	flags = slimmed(t, flags)
	old := &corev1.ConfigMap{}
	if err := f.c.Get(context.Background(), client.ObjectKeyFromObject(flags), old); err != nil {
		t.Fatal(err)
	}
	flags.ResourceVersion = old.ResourceVersion
	if err := f.c.Update(context.Background(), flags); err != nil {
		t.Fatal(err)
	}
	f.reconcile(t, "d0")
	if got := f.get(t, "d0").Spec.Template.Annotations[contract.ChecksumAnnotation]; got == canary {
		t.Fatal("d0 was not re-stamped for the waves-off source")
	}

	// Its rollout of the new stamp succeeds: the next wave goes.
	f.setStatus(t, true, false)
	f.reconcile(t, "d0")
	if !slices.Equal(f.woken, []string{"d1", "d2"}) {
		t.Fatalf("woke %v after the canary's new stamp rolled out, want the second wave", f.woken)
	}
}

// A reader in flight whose template the webhook stamps with newer content
// (a template change mid-rollout) is judged on that stamp from then on.
func TestAdoptMovesAFlightToTheTemplatesStamp(t *testing.T) {
	p, pl := sharedPlan(3)
	r0 := req("r00")
	_, _, f := p.admit(r0, r0, []*plan{pl}, "s1", wavesT0, false)
	p.written(r0, f, "s1")
	p.adopt(r0, "s3", wavesT0)
	if got, ok := p.inFlight(r0); !ok || got.stamp != "s3" || !got.since.Equal(wavesT0) {
		t.Fatalf("in flight %v with stamp %q since %s; want s3, since the first re-stamp", ok, got.stamp, got.since)
	}
}
