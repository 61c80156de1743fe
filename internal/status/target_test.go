package status

import (
	"strings"
	"testing"

	"github.com/confighash/confighash/internal/workload"
)

func TestParseTarget(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    Target
		wantErr string
	}{
		"bare name":             {in: "web", want: Target{Name: "web"}},
		"kind/name":             {in: "deployment/web", want: Target{KindName: "Deployment", Name: "web"}},
		"plural":                {in: "statefulsets/db", want: Target{KindName: "StatefulSet", Name: "db"}},
		"short name":            {in: "ds/agent", want: Target{KindName: "DaemonSet", Name: "agent"}},
		"group-qualified":       {in: "cronjobs.batch/nightly", want: Target{KindName: "CronJob", Name: "nightly"}},
		"any case":              {in: "Deployment/web", want: Target{KindName: "Deployment", Name: "web"}},
		"dotted name":           {in: "deploy/web.v2", want: Target{KindName: "Deployment", Name: "web.v2"}},
		"job is not re-stamped": {in: "job/x", wantErr: "unknown kind"},
		"pod":                   {in: "pod/x", wantErr: "unknown kind"},
		"empty name":            {in: "deployment/", wantErr: "want KIND/NAME"},
		"empty":                 {in: "", wantErr: "want KIND/NAME"},
		"bad name":              {in: "deployment/Web", wantErr: "invalid workload name"},
		"too many slashes":      {in: "apps/deployment/web", wantErr: "invalid workload name"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTarget(tc.in, workload.Kinds())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseTarget(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestTargetKinds(t *testing.T) {
	if n, want := len(Target{}.kinds(workload.Kinds())), len(workload.Kinds().Mutable()); n != want {
		t.Errorf("a bare name covers %d kinds, want %d", n, want)
	}
	if k := (Target{KindName: "CronJob"}).kinds(workload.Kinds()); len(k) != 1 || k[0].GVK.Kind != "CronJob" {
		t.Errorf("kinds = %v", k)
	}
}

// TestParseTargetCustomKind: a kind confighash's --workload-kind adds is
// named like a built-in one once status is told the same list, and not
// before.
func TestParseTargetCustomKind(t *testing.T) {
	widget, err := workload.ParseKind("group=e.io,version=v1,kind=Widget,resource=widgets,template=spec.template")
	if err != nil {
		t.Fatal(err)
	}
	reg, err := workload.NewRegistry(widget)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"widget", "widgets", "Widget.e.io", "widgets.e.io"} {
		got, err := ParseTarget(name+"/web", reg)
		if err != nil || got.KindName != "Widget.e.io" {
			t.Errorf("ParseTarget(%q) = %+v, %v", name+"/web", got, err)
		}
		if ks := got.kinds(reg); len(ks) != 1 || ks[0].GVK != widget.GVK {
			t.Errorf("%q covers %v", name, ks)
		}
	}
	if _, err := ParseTarget("widget/web", workload.Kinds()); err == nil {
		t.Error("a custom kind was accepted without the registry that has it")
	}
	if n := len(Target{}.kinds(reg)); n != len(workload.Kinds().Mutable())+1 {
		t.Errorf("every kind is %d kinds, want the built-in ones and Widget", n)
	}
}
