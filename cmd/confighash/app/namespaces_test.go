package app

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/confighash/confighash/internal/workload"
)

func TestNamespacesFlag(t *testing.T) {
	tests := map[string]struct {
		args    []string
		want    []string
		wantErr string
	}{
		"unset: every namespace":      {},
		"a list":                      {args: []string{"--namespaces=team-a,team-b"}, want: []string{"team-a", "team-b"}},
		"repeated flag adds":          {args: []string{"--namespaces=team-a", "--namespaces=team-b"}, want: []string{"team-a", "team-b"}},
		"own namespace":               {args: []string{"--namespaces=team-a,confighash-system"}, wantErr: "never served"},
		"own namespace, moved":        {args: []string{"--namespace=ops", "--namespaces=ops"}, wantErr: "never served"},
		"kube-system":                 {args: []string{"--namespaces=kube-system"}, wantErr: "never served"},
		"empty element":               {args: []string{"--namespaces=team-a,,team-b"}, wantErr: "empty name"},
		"not a namespace name":        {args: []string{"--namespaces=Team_A"}, wantErr: "not a namespace name"},
		"twice":                       {args: []string{"--namespaces=team-a,team-a"}, wantErr: "given twice"},
		"with out-of-cluster mode":    {args: []string{"--namespaces=team-a", "--webhook-url=https://127.0.0.1:9443"}, want: []string{"team-a"}},
		"own namespace is fine alone": {args: []string{"--namespace=team-a", "--namespaces=team-b"}, want: []string{"team-b"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o, err := parseServe(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parsing %v: error %v, want one with %q", tc.args, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parsing %v: %v", tc.args, err)
			}
			if !slices.Equal(o.Namespaces, tc.want) {
				t.Errorf("Namespaces = %v, want %v", o.Namespaces, tc.want)
			}
			got := slices.Sorted(maps.Keys(cacheNamespaces(o.Namespaces)))
			if len(tc.want) == 0 && cacheNamespaces(o.Namespaces) != nil || !slices.Equal(got, tc.want) && len(tc.want) > 0 {
				t.Errorf("cache namespaces = %v, want %v (nil: all)", got, tc.want)
			}
		})
	}
}

// TestPermissionsNamespaced: in namespaced mode no request for config,
// workloads or their events reaches beyond the listed namespaces, so the
// manifests can grant them with Roles; only Namespaces stay cluster-wide.
func TestPermissionsNamespaced(t *testing.T) {
	list := []string{"team-a", "team-b"}
	served := map[string]bool{"configmaps": true, "secrets": true, "deployments": true, "statefulsets": true,
		"daemonsets": true, "cronjobs": true, "events": true}
	tests := map[string]struct {
		namespaces []string
		wantScoped []string // the Namespaces of every served entry
	}{
		"cluster-wide": {},
		"namespaced":   {namespaces: list, wantScoped: list},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := DefaultOptions()
			o.Namespaces = tc.namespaces
			var nsGets []string
			for _, p := range Permissions(o, workload.Kinds()) {
				switch {
				case p.OwnNamespace:
					if len(p.Namespaces) > 0 {
						t.Errorf("%s %v is in the own namespace and in %v", p.Resource, p.Verbs, p.Namespaces)
					}
				case served[p.Resource]:
					if !slices.Equal(p.Namespaces, tc.wantScoped) {
						t.Errorf("%s %v in namespaces %v, want %v (nil: all)", p.Resource, p.Verbs, p.Namespaces, tc.wantScoped)
					}
				case p.Resource == "namespaces" && slices.Contains(p.Verbs, "get"):
					nsGets = append(nsGets, p.Name)
				}
			}
			wantGets := []string{AnyName}
			if len(tc.namespaces) > 0 {
				wantGets = tc.namespaces
			}
			if !slices.Equal(nsGets, wantGets) {
				t.Errorf("namespaces get names %v, want %v", nsGets, wantGets)
			}
		})
	}
}

// parsedServe is serve's options from args, parsed but not validated.
func parsedServe(t *testing.T, args ...string) Options {
	t.Helper()
	o := DefaultOptions()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	o.bind(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("Parse(%q): %v", args, err)
	}
	return o
}

// parseServe parses and validates a serve command line, as Serve does.
func parseServe(args []string) (Options, error) {
	o := DefaultOptions()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	fs.SetOutput(&strings.Builder{})
	o.bind(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	_, err := o.validate()
	return o, err
}

// TestStatusNamespacesFlag: status takes a namespaced confighash's list,
// held to the same rules as serve's --namespaces.
func TestStatusNamespacesFlag(t *testing.T) {
	tests := map[string]struct {
		args    []string
		want    []string
		wantErr string
	}{
		"unset":              {args: []string{"deployment/app"}},
		"a list":             {args: []string{"--served-namespaces=team-a,team-b", "deployment/app"}, want: []string{"team-a", "team-b"}},
		"own namespace":      {args: []string{"--served-namespaces=confighash-system"}, wantErr: "never served"},
		"with check-install": {args: []string{"--check-install", "--served-namespaces=team-a"}, want: []string{"team-a"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			a, err := parseStatusArgs(tc.args, &strings.Builder{})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(a.ServedNamespaces, tc.want) {
				t.Errorf("parse %v = %v, %v; want %v", tc.args, a, err, tc.want)
			}
		})
	}
}
