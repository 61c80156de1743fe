package app

import (
	"slices"
	"strings"
	"testing"

	"github.com/confighash/confighash/internal/workload"
)

const cloneSetKind = "group=apps.kruise.io,version=v1alpha1,kind=CloneSet,resource=clonesets,template=spec.template"

func kindNamesOf(r workload.Registry) []string {
	var names []string
	for _, k := range r {
		names = append(names, k.Name())
	}
	return names
}

// TestWorkloadKinds: the one reading of --workload-kind gives the built-in
// kinds plus the custom ones, and serve's validate, the permissions of a
// command line and status all resolve the same registry through it.
func TestWorkloadKinds(t *testing.T) {
	builtin, err := workloadKinds(nil)
	if err != nil || !slices.Equal(kindNamesOf(builtin), kindNamesOf(workload.Kinds())) {
		t.Fatalf("workloadKinds(nil) = %v, %v; want the built-in kinds %v", kindNamesOf(builtin), err, kindNamesOf(workload.Kinds()))
	}
	want, err := workloadKinds([]string{cloneSetKind})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != len(builtin)+1 {
		t.Fatalf("with a custom kind: %v", kindNamesOf(want))
	}

	o := DefaultOptions()
	o.WorkloadKinds = []string{cloneSetKind}
	v, err := o.validate()
	if err != nil || !slices.Equal(kindNamesOf(v.kinds), kindNamesOf(want)) {
		t.Errorf("validate's kinds = %v, %v; want %v", kindNamesOf(v.kinds), err, kindNamesOf(want))
	}
	fromArgs, err := KindsForArgs([]string{"--workload-kind=" + cloneSetKind})
	if err != nil || !slices.Equal(kindNamesOf(fromArgs), kindNamesOf(want)) {
		t.Errorf("KindsForArgs = %v, %v; want %v", kindNamesOf(fromArgs), err, kindNamesOf(want))
	}
	a, err := parseStatusArgs([]string{"--workload-kind=" + cloneSetKind, "clonesets/app"}, &strings.Builder{})
	if err != nil || !slices.Equal(kindNamesOf(a.kinds), kindNamesOf(want)) || a.target.Name != "app" || a.target.KindName == "" {
		t.Errorf("status kinds = %v, target %+v, %v; want %v and the CloneSet app", kindNamesOf(a.kinds), a.target, err, kindNamesOf(want))
	}

	if _, err := workloadKinds([]string{"kind=Nope"}); err == nil || !strings.HasPrefix(err.Error(), "--workload-kind: ") {
		t.Errorf("a bad value: error %v, want one naming --workload-kind", err)
	}
	o.WorkloadKinds = []string{cloneSetKind, cloneSetKind}
	if _, err := o.validate(); err == nil || !strings.Contains(err.Error(), "--workload-kind") {
		t.Errorf("a kind given twice: validate error %v, want one naming --workload-kind", err)
	}
}

// A bad --workload-kind is reported alone by status: the target is not
// checked against a registry other than the one asked for (the built-in
// kinds would call a custom kind's target unknown).
func TestStatusBadWorkloadKind(t *testing.T) {
	_, err := parseStatusArgs([]string{"--workload-kind=kind=Nope", "clonesets/app"}, &strings.Builder{})
	if err == nil || !strings.Contains(err.Error(), "--workload-kind") {
		t.Fatalf("error %v, want the --workload-kind one", err)
	}
	if strings.Contains(err.Error(), "unknown kind") {
		t.Errorf("error %v also calls the target's kind unknown", err)
	}
}
