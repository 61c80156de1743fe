package status

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/kindcheck"
	"github.com/confighash/confighash/internal/window"
	"github.com/confighash/confighash/internal/workload"
)

// fakeKindChecker answers as kindcheck.Checker would, from a table of
// errors by kind name, and counts its calls.
type fakeKindChecker struct {
	errs  map[string]error
	calls int
}

func (f *fakeKindChecker) Served(_ context.Context, k workload.Kind) (bool, error) {
	f.calls++
	return true, f.errs[k.Name()]
}

// TestKindNotWatched: a workload of a custom kind whose template path the
// hook's check refuses is not-watched, whatever its stamp, and needs
// attention; a kind that could not be checked only warns; built-in kinds
// are never checked, and each custom kind is checked once.
func TestKindNotWatched(t *testing.T) {
	rolloutGVK := schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"}
	gadgetGVK := schema.GroupVersionKind{Group: "e.io", Version: "v1", Kind: "Gadget"}
	gadget, err := workload.ParseKind("group=e.io,version=v1,kind=Gadget,resource=gadgets,template=spec.template")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := workload.NewRegistry(gadget)
	if err != nil {
		t.Fatal(err)
	}
	obj := func(gvk schema.GroupVersionKind, name string) client.Object {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(gvk)
		u.SetName(name)
		return u
	}
	d := &appsv1.Deployment{}
	d.SetGroupVersionKind(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	objs := []client.Object{d, obj(rolloutGVK, "a"), obj(rolloutGVK, "b"), obj(gadgetGVK, "g")}
	pathErr := &kindcheck.PathError{GVK: rolloutGVK, Path: []string{"spec", "template"}, Why: `the schema has no field "spec" under the root`}
	kc := &fakeKindChecker{errs: map[string]error{"Rollout.argoproj.io": pathErr, "Gadget.e.io": errors.New("discovery is down")}}

	v := checkKinds(context.Background(), kc, reg, objs)
	if kc.calls != 2 {
		t.Errorf("%d checks, want one per custom kind (2)", kc.calls)
	}
	on := Injection{InjectionOn, "labelled"}
	for _, tc := range []struct {
		obj        client.Object
		want       State
		wantReason string
		warns      bool
	}{
		{obj: objs[0], want: StateCurrent},
		{obj: objs[1], want: StateNotWatched, wantReason: `does not watch this kind (argoproj.io/v1alpha1 Rollout: template path spec.template: the schema has no field "spec" under the root)`},
		{obj: objs[3], want: StateCurrent, warns: true},
	} {
		w := &Workload{Kind: tc.obj.GetObjectKind().GroupVersionKind().Kind, Injection: on, StampedChecksum: "v2:k:aa", ExpectedChecksum: "v2:k:aa"}
		v.fill(w, tc.obj.GetObjectKind().GroupVersionKind())
		state, reason := Classify(w, time.Time{}, window.Cluster{})
		if state != tc.want || !strings.Contains(reason, tc.wantReason) {
			t.Errorf("%s: %s (%s), want %s saying %q", w.Kind, state, reason, tc.want, tc.wantReason)
		}
		if tc.warns != (len(w.Warnings) > 0) {
			t.Errorf("%s: warnings %q", w.Kind, w.Warnings)
		}
	}
	if !StateNotWatched.NeedsAttention() {
		t.Error("not-watched does not make status exit 1")
	}
	// Injection off still wins: confighash does not stamp it at all.
	w := &Workload{Injection: Injection{InjectionOff, "opted out"}, NotWatched: "x"}
	if state, _ := Classify(w, time.Time{}, window.Cluster{}); state != StateNotInjected {
		t.Errorf("opted-out workload of a refused kind is %s, want not-injected", state)
	}
}
