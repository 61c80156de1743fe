package deploy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/confighash/confighash/internal/restamp"
)

// hookValue is a chart value that maps to one of the hook's flags, rendered
// only when set.
type hookValue struct {
	path []string // under .Values
	flag string
	set  any    // a value other than the binary's default
	want string // the flag's value as the binary reads it back
}

var hookValues = []hookValue{
	{[]string{"coalesceMax"}, "coalesce-max", "30s", "30s"},
	{[]string{"writesBurst"}, "writes-burst", 1000000, "1000000"},
	{[]string{"flapQuiet"}, "flap-quiet", "2m", "2m0s"},
	{[]string{"flapQuietMax"}, "flap-quiet-max", "1h", "1h0m0s"},
	{[]string{"waves", "maxWaveSize"}, "max-wave-size", 0, "0"},
	{[]string{"waves", "maxConcurrentRollouts"}, "max-concurrent-rollouts", 3, "3"},
	{[]string{"waves", "rolloutTimeout"}, "rollout-timeout", "0", "0s"},
	{[]string{"waves", "rolloutSoak"}, "rollout-soak", "30s", "30s"},
	{[]string{"waves", "rolloutWindow"}, "rollout-window", "Mon-Fri 09:00-17:00 Europe/Berlin", "Mon-Fri 09:00-17:00 Europe/Berlin"},
	{[]string{"waves", "freeze"}, "freeze", "2026-12-21/2027-01-04 Europe/Berlin; 2027-04-01/2027-04-02 UTC", "2026-12-21/2027-01-04 Europe/Berlin; 2027-04-01/2027-04-02 UTC"},
}

// hookFlags binds the hook's flags as the binary does, with its defaults.
func hookFlags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("hook", pflag.ContinueOnError)
	fs.ParseErrorsAllowlist.UnknownFlags = true
	o := restamp.DefaultOptions()
	o.BindFlags(fs)
	return fs
}

func hookArgs(t *testing.T, values map[string]any) []string {
	t.Helper()
	values["createNamespace"] = true
	r := decode(t, Render{Name: "helm", Objects: helmTemplate(t, Namespace, values)})
	if r.Container == nil {
		t.Fatal("no confighash container")
	}
	return r.Container.Args
}

// TestChartHookValues: each value of the waves, holds and bounds is absent
// from the Deployment's command line while unset (so the binary's default
// holds) and, once set, passes its flag in a form the binary reads back as
// that value, 0 included.
func TestChartHookValues(t *testing.T) {
	for _, a := range hookArgs(t, map[string]any{}) {
		for _, v := range hookValues {
			if strings.HasPrefix(a, "--"+v.flag+"=") {
				t.Errorf("unset %s renders %s", strings.Join(v.path, "."), a)
			}
		}
	}
	values := map[string]any{}
	for _, v := range hookValues {
		m := values
		for _, k := range v.path[:len(v.path)-1] {
			if m[k] == nil {
				m[k] = map[string]any{}
			}
			m = m[k].(map[string]any)
		}
		m[v.path[len(v.path)-1]] = v.set
	}
	args := hookArgs(t, values)
	fs := hookFlags()
	if err := fs.Parse(args); err != nil {
		t.Fatalf("the hook's flags refuse %v: %v", args, err)
	}
	for _, v := range hookValues {
		f := fs.Lookup(v.flag)
		if f == nil {
			t.Errorf("%s: the binary has no --%s", strings.Join(v.path, "."), v.flag)
			continue
		}
		if !f.Changed || f.Value.String() != v.want {
			t.Errorf("%s=%v: --%s is %q (set %v), want %q", strings.Join(v.path, "."), v.set, v.flag, f.Value.String(), f.Changed, v.want)
		}
	}
}

// TestChartHookValuesReadmeDefaults: the chart README's row for each of
// these values names its flag and gives the binary's own default, as
// "unset: `X`" ("unset: none" for an empty one).
func TestChartHookValuesReadmeDefaults(t *testing.T) {
	_, p := allRenders(t)
	path := filepath.Join(p.Chart(), "README.md")
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	fs := hookFlags()
	for _, v := range hookValues {
		key := strings.Join(v.path, ".")
		f := fs.Lookup(v.flag)
		if f == nil {
			t.Errorf("%s: the binary has no --%s", key, v.flag)
			continue
		}
		_, row, ok := strings.Cut(string(text), "\n| `"+key+"` |")
		if !ok {
			t.Errorf("%s has no row for %s", path, key)
			continue
		}
		row, _, _ = strings.Cut(row, "\n")
		unset := "unset: `" + f.DefValue + "`"
		if f.DefValue == "" {
			unset = "unset: none" // a flag whose default is empty sets nothing
		}
		for _, want := range []string{"(`--" + v.flag + "`)", unset} {
			if !strings.Contains(row, want) {
				t.Errorf("%s: the row for %s lacks %s: %s", path, key, want, row)
			}
		}
	}
}
