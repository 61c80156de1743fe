package hasher

import (
	"strings"
	"testing"
)

func TestParseSource(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    Source
		wantErr string // substring; "" means success
	}{
		"configmap":             {in: "configmap/app", want: Source{ConfigMap, "app"}},
		"secret":                {in: "secret/db-creds", want: Source{Secret, "db-creds"}},
		"kind case-insensitive": {in: "ConfigMap/app", want: Source{ConfigMap, "app"}},
		"upper kind":            {in: "SECRET/x", want: Source{Secret, "x"}},
		"dotted name":           {in: "configmap/app.v2", want: Source{ConfigMap, "app.v2"}},
		"surrounding space":     {in: "  secret/db \t", want: Source{Secret, "db"}},
		"no slash":              {in: "app", wantErr: `invalid source "app": want "configmap/NAME" or "secret/NAME"`},
		"unknown kind":          {in: "deployment/app", wantErr: `unknown kind "deployment"`},
		"empty kind":            {in: "/app", wantErr: `unknown kind ""`},
		"empty name":            {in: "secret/", wantErr: `invalid source "secret/": missing name`},
		"uppercase name":        {in: "configmap/App", wantErr: `invalid name "App"`},
		"space inside":          {in: "configmap/ app", wantErr: `invalid name " app"`},
		"second slash":          {in: "configmap/a/b", wantErr: `invalid name "a/b"`},
		"too long":              {in: "configmap/" + strings.Repeat("a", 254), wantErr: "must be no more than 253"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseSource(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseSource(%q) error = %v, want containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSource(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseSource(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
		})
	}
}

func TestSourceStringRoundTrips(t *testing.T) {
	for _, src := range []Source{{ConfigMap, "app"}, {Secret, "db.creds"}} {
		s := src.String()
		if s != strings.ToLower(string(src.Kind))+"/"+src.Name {
			t.Errorf("String() = %q", s)
		}
		got, err := ParseSource(s)
		if err != nil || got != src {
			t.Errorf("ParseSource(%q) = %+v, %v; want %+v", s, got, err, src)
		}
	}
}
