package restamp

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestValidate: each setting out of range is reported, naming its flag and
// no other setting's.
func TestValidate(t *testing.T) {
	flags := []string{"--coalesce-window", "--coalesce-max", "--writes-per-second", "--writes-burst",
		"--flap-limit", "--flap-window", "--flap-quiet", "--flap-quiet-max", "--hook-workers"}
	tests := map[string]struct {
		mutate func(*Options)
		want   string // the whole error; "" for none
	}{
		"defaults":                  {mutate: func(*Options) {}},
		"zero coalesce window":      {mutate: func(o *Options) { o.CoalesceWindow = 0 }},
		"cap equal to the window":   {mutate: func(o *Options) { o.CoalesceMax = o.CoalesceWindow }},
		"negative coalesce window":  {mutate: func(o *Options) { o.CoalesceWindow = -time.Second }, want: "--coalesce-window must be >= 0"},
		"coalesce cap below window": {mutate: func(o *Options) { o.CoalesceWindow, o.CoalesceMax = time.Minute, time.Second }, want: "--coalesce-max must be >= --coalesce-window"},
		"zero writes per second":    {mutate: func(o *Options) { o.WritesPerSecond = 0 }, want: "--writes-per-second must be > 0 and finite"},
		"NaN writes per second":     {mutate: func(o *Options) { o.WritesPerSecond = math.NaN() }, want: "--writes-per-second must be > 0 and finite"},
		"endless writes per second": {mutate: func(o *Options) { o.WritesPerSecond = math.Inf(1) }, want: "--writes-per-second must be > 0 and finite"},
		"zero writes burst":         {mutate: func(o *Options) { o.WritesBurst = 0 }, want: "--writes-burst must be >= 1"},
		"zero flap limit":           {mutate: func(o *Options) { o.FlapLimit = 0 }, want: "--flap-limit must be >= 1"},
		"zero flap window":          {mutate: func(o *Options) { o.FlapWindow = 0 }, want: "--flap-window must be > 0"},
		"zero flap quiet":           {mutate: func(o *Options) { o.FlapQuiet = 0 }, want: "--flap-quiet must be > 0"},
		"flap quiet cap below it":   {mutate: func(o *Options) { o.FlapQuiet, o.FlapMaxQuiet = time.Hour, time.Minute }, want: "--flap-quiet-max must be >= --flap-quiet"},
		"no waves":                  {mutate: func(o *Options) { o.MaxWaveSize, o.MaxConcurrentRollouts, o.RolloutTimeout, o.RolloutSoak = 0, 0, 0, 0 }},
		"negative wave size":        {mutate: func(o *Options) { o.MaxWaveSize = -1 }, want: "--max-wave-size must be >= 0"},
		"negative rollout bound":    {mutate: func(o *Options) { o.MaxConcurrentRollouts = -1 }, want: "--max-concurrent-rollouts must be >= 0"},
		"negative rollout timeout":  {mutate: func(o *Options) { o.RolloutTimeout = -time.Second }, want: "--rollout-timeout must be >= 0"},
		"negative rollout soak":     {mutate: func(o *Options) { o.RolloutSoak = -time.Second }, want: "--rollout-soak must be >= 0"},
		"zero workers":              {mutate: func(o *Options) { o.Workers = 0 }, want: "--hook-workers must be >= 1"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := DefaultOptions()
			tc.mutate(&o)
			err := o.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("every error is reported, once", func(t *testing.T) {
		err := Options{CoalesceWindow: -1, CoalesceMax: -2, FlapQuiet: -1, FlapMaxQuiet: -2}.Validate()
		if err == nil {
			t.Fatal("Validate = nil")
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != len(flags) {
			t.Errorf("%d errors, want %d: %q", len(lines), len(flags), lines)
		}
		for i, f := range flags {
			if i < len(lines) && !strings.HasPrefix(lines[i], f+" ") {
				t.Errorf("error %d = %q, want it about %s", i, lines[i], f)
			}
		}
	})
}

// TestBindFlags: every setting has its flag, with the defaults as they were
// when they were app's or hard-coded in it (Burst 100, Workers 8).
func TestBindFlags(t *testing.T) {
	o := DefaultOptions()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.BindFlags(fs)
	want := Options{CoalesceWindow: time.Second, CoalesceMax: 10 * time.Second, WritesPerSecond: 100, WritesBurst: 100,
		FlapLimit: 5, FlapWindow: 10 * time.Minute, FlapQuiet: time.Minute, FlapMaxQuiet: 30 * time.Minute, Workers: 8,
		MaxWaveSize: 16, MaxConcurrentRollouts: 10, RolloutTimeout: 15 * time.Minute, RolloutSoak: 10 * time.Second}
	if o != want {
		t.Errorf("defaults = %+v, want %+v", o, want)
	}
	args := []string{"--coalesce-window=3s", "--coalesce-max=30s", "--writes-per-second=2.5", "--writes-burst=7",
		"--flap-limit=4", "--flap-window=1m", "--flap-quiet=20s", "--flap-quiet-max=5m", "--hook-workers=3",
		"--max-wave-size=0", "--max-concurrent-rollouts=3", "--rollout-timeout=1m", "--rollout-soak=0s"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	want = Options{CoalesceWindow: 3 * time.Second, CoalesceMax: 30 * time.Second, WritesPerSecond: 2.5, WritesBurst: 7,
		FlapLimit: 4, FlapWindow: time.Minute, FlapQuiet: 20 * time.Second, FlapMaxQuiet: 5 * time.Minute, Workers: 3,
		MaxConcurrentRollouts: 3, RolloutTimeout: time.Minute}
	if o != want {
		t.Errorf("after %q: %+v, want %+v", args, o, want)
	}
}
