package app

import (
	"regexp"
	"slices"
	"testing"
	"time"
)

// TestValidateNamesTheHookFlagAtFault: a hook setting out of range gives one
// error, which names its flag (and, for a bound, the flag it is bound by),
// not the other hook flags.
func TestValidateNamesTheHookFlagAtFault(t *testing.T) {
	tests := map[string]struct {
		mutate func(*Options)
		want   []string // the flags named
	}{
		"coalesce window": {func(o *Options) { o.Hook.CoalesceWindow = -time.Second }, []string{"--coalesce-window"}},
		"coalesce cap":    {func(o *Options) { o.Hook.CoalesceMax = time.Millisecond }, []string{"--coalesce-max", "--coalesce-window"}},
		"write rate":      {func(o *Options) { o.Hook.WritesPerSecond = 0 }, []string{"--writes-per-second"}},
		"write burst":     {func(o *Options) { o.Hook.WritesBurst = 0 }, []string{"--writes-burst"}},
		"flap limit":      {func(o *Options) { o.Hook.FlapLimit = 0 }, []string{"--flap-limit"}},
		"flap window":     {func(o *Options) { o.Hook.FlapWindow = 0 }, []string{"--flap-window"}},
		"flap quiet":      {func(o *Options) { o.Hook.FlapQuiet = 0 }, []string{"--flap-quiet"}},
		"flap quiet cap":  {func(o *Options) { o.Hook.FlapMaxQuiet = time.Second }, []string{"--flap-quiet-max", "--flap-quiet"}},
		"workers":         {func(o *Options) { o.Hook.Workers = 0 }, []string{"--hook-workers"}},
	}
	flag := regexp.MustCompile(`--[a-z-]+`)
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := DefaultOptions()
			tc.mutate(&o)
			_, err := o.validate()
			if err == nil {
				t.Fatal("validate = nil, want an error")
			}
			if got := flag.FindAllString(err.Error(), -1); !slices.Equal(got, tc.want) {
				t.Errorf("error %q names %q, want %q", err, got, tc.want)
			}
		})
	}
}
