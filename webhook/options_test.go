package webhook

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// BindFlags binds the webhook's two flags with the defaults as defaults,
// and Validate's errors name the flags BindFlags bound.
func TestOptionsBindFlags(t *testing.T) {
	o := DefaultOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.BindFlags(fs)
	for name, want := range map[string]string{"webhook-max-in-flight": "8", "webhook-max-connections-per-address": "32"} {
		f := fs.Lookup(name)
		if f == nil {
			t.Fatalf("--%s not bound", name)
		}
		if f.DefValue != want || f.Usage == "" {
			t.Errorf("--%s: default %q, usage %q; want default %s and a usage", name, f.DefValue, f.Usage, want)
		}
	}
	if err := fs.Parse([]string{"--webhook-max-in-flight=0", "--webhook-max-connections-per-address=0"}); err != nil {
		t.Fatal(err)
	}
	err := o.Validate()
	for _, want := range []string{"--webhook-max-in-flight must be >= 1", "--webhook-max-connections-per-address must be >= 1"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want %q", err, want)
		}
	}
}
