package status

import (
	"strings"
	"testing"

	"github.com/confighash/confighash/workload"
)

func TestParseTarget(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    Target
		wantErr string
	}{
		"bare name":             {in: "web", want: Target{Name: "web"}},
		"kind/name":             {in: "deployment/web", want: Target{Kind: "Deployment", Name: "web"}},
		"plural":                {in: "statefulsets/db", want: Target{Kind: "StatefulSet", Name: "db"}},
		"short name":            {in: "ds/agent", want: Target{Kind: "DaemonSet", Name: "agent"}},
		"group-qualified":       {in: "cronjobs.batch/nightly", want: Target{Kind: "CronJob", Name: "nightly"}},
		"any case":              {in: "Deployment/web", want: Target{Kind: "Deployment", Name: "web"}},
		"dotted name":           {in: "deploy/web.v2", want: Target{Kind: "Deployment", Name: "web.v2"}},
		"job is not re-stamped": {in: "job/x", wantErr: "unknown kind"},
		"pod":                   {in: "pod/x", wantErr: "unknown kind"},
		"empty name":            {in: "deployment/", wantErr: "want KIND/NAME"},
		"empty":                 {in: "", wantErr: "want KIND/NAME"},
		"bad name":              {in: "deployment/Web", wantErr: "invalid workload name"},
		"too many slashes":      {in: "apps/deployment/web", wantErr: "invalid workload name"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseTarget(tc.in)
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
	if n, want := len(Target{}.kinds()), len(workload.MutableKinds()); n != want {
		t.Errorf("a bare name covers %d kinds, want %d", n, want)
	}
	if k := (Target{Kind: "CronJob"}).kinds(); len(k) != 1 || k[0].GVK.Kind != "CronJob" {
		t.Errorf("kinds = %v", k)
	}
}
