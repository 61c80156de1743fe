package restamp

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/spf13/pflag"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/window"
)

// Options are the hook's settings, one name each: BindFlags binds each to
// its flag of `confighash serve`, whose help text documents it, and
// Validate checks them. Setup takes them as they are.
type Options struct {
	// CoalesceWindow is the trailing coalescing window (--coalesce-window)
	// and CoalesceMax its cap (--coalesce-max); see queue_debounce.go.
	CoalesceWindow time.Duration
	CoalesceMax    time.Duration
	// WritesPerSecond and WritesBurst are the global write budget
	// (--writes-per-second, --writes-burst).
	WritesPerSecond float64
	WritesBurst     int
	// FlapLimit, FlapWindow, FlapQuiet and FlapMaxQuiet tune the flap hold
	// (--flap-limit, --flap-window, --flap-quiet, --flap-quiet-max); see
	// check_flap.go.
	FlapLimit    int
	FlapWindow   time.Duration
	FlapQuiet    time.Duration
	FlapMaxQuiet time.Duration
	// Workers is how many workloads are re-checked at once (--hook-workers).
	Workers int
	// MaxWaveSize caps the waves a change's readers are re-stamped in
	// (--max-wave-size; 0: no waves, every reader at once);
	// MaxConcurrentRollouts bounds the config-triggered rollouts in progress
	// across all changes (--max-concurrent-rollouts; 0: no bound);
	// RolloutTimeout fails a rollout still going after it
	// (--rollout-timeout; 0: never), RolloutSoak is how long a rollout's new
	// pods must run unharmed before it counts as a success (--rollout-soak).
	// See wave_plan.go and wave_health.go.
	MaxWaveSize           int
	MaxConcurrentRollouts int
	RolloutTimeout        time.Duration
	RolloutSoak           time.Duration
	// RolloutWindow is the cluster's rollout window (--rollout-window; ""
	// none) and Freeze its freezes (--freeze), as internal/window reads
	// them; see wave_window.go.
	RolloutWindow string
	Freeze        string
}

// DefaultOptions are the flag defaults.
func DefaultOptions() Options {
	return Options{
		CoalesceWindow:  time.Second,
		CoalesceMax:     10 * time.Second,
		WritesPerSecond: 100,
		// A burst the size of a large fan-out lets one change reach its
		// readers at once; the rate caps sustained storms.
		WritesBurst: 100,
		// Five rollouts of every reader in ten minutes is already a lot
		// for a config that is being edited by hand; a flap gets no more.
		FlapLimit:    5,
		FlapWindow:   10 * time.Minute,
		FlapQuiet:    time.Minute,
		FlapMaxQuiet: 30 * time.Minute,
		// Re-stamps wait on the apiserver (and its call to the webhook),
		// not on CPU, so a few more workers than cores pay off.
		Workers: 8,
		// 1, 2, 4, 8, 16, 16, ...: a bad value reaches one reader first, and
		// a config shared by 200 readers still goes in 16 waves.
		MaxWaveSize: 16,
		// Each rollout surges pods (25% of a Deployment by default); ten at
		// once is a few hundred extra pods at most for typical services,
		// which a cluster absorbs, where 200 at once are a storm.
		MaxConcurrentRollouts: 10,
		// Longer than a Deployment's default progress deadline (10m), so
		// that a Deployment fails by its own deadline, with its reason,
		// first; it bounds the kinds that have none (StatefulSets,
		// DaemonSets, custom kinds).
		RolloutTimeout: 15 * time.Minute,
		// A program that reads its config at start and refuses it exits
		// within a second; one that runs a moment first still counts as
		// available to a Deployment without a readiness probe. Ten
		// seconds of running unharmed catches both and adds little to a
		// wave.
		RolloutSoak: 10 * time.Second,
	}
}

// BindFlags binds o's flags in fs, with o's values as their defaults.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.CoalesceWindow, "coalesce-window", o.CoalesceWindow, "wait this long for further changes to a workload's sources before re-stamping it; each further change restarts the wait (workload annotation "+contract.CoalesceWindowAnnotation+" overrides it)")
	fs.DurationVar(&o.CoalesceMax, "coalesce-max", o.CoalesceMax, "re-stamp at most this long after the first of a run of changes, however long they keep coming")
	fs.Float64Var(&o.WritesPerSecond, "writes-per-second", o.WritesPerSecond, "global budget of workload re-stamps per second")
	fs.IntVar(&o.WritesBurst, "writes-burst", o.WritesBurst, "re-stamps that may go at once within --writes-per-second, so that one change reaches that many readers without waiting")
	fs.IntVar(&o.FlapLimit, "flap-limit", o.FlapLimit, "hold a workload re-stamped more than this many times within --flap-window")
	fs.DurationVar(&o.FlapWindow, "flap-window", o.FlapWindow, "window of --flap-limit; a hold that starts within it of the end of the last one doubles the quiet time")
	fs.DurationVar(&o.FlapQuiet, "flap-quiet", o.FlapQuiet, "a held workload takes its sources' latest content, once, after they have not changed for this long")
	fs.DurationVar(&o.FlapMaxQuiet, "flap-quiet-max", o.FlapMaxQuiet, "cap of the doubling --flap-quiet")
	fs.IntVar(&o.Workers, "hook-workers", o.Workers, "workloads the config-update hook re-checks at once")
	fs.IntVar(&o.MaxWaveSize, "max-wave-size", o.MaxWaveSize, "a change's readers are re-stamped in waves of 1, 2, 4, ... up to this many, each once the previous one rolled out; 0 re-stamps every reader at once, with no wave and no halt")
	fs.IntVar(&o.MaxConcurrentRollouts, "max-concurrent-rollouts", o.MaxConcurrentRollouts, "at most this many config-triggered rollouts in progress at once, across all changes; 0 is no bound")
	fs.DurationVar(&o.RolloutTimeout, "rollout-timeout", o.RolloutTimeout, "a re-stamped reader still rolling out after this long fails, and halts its change; 0 waits forever")
	fs.DurationVar(&o.RolloutSoak, "rollout-soak", o.RolloutSoak, "a rollout succeeds only once its new pods have run this long without a restart")
	fs.StringVar(&o.RolloutWindow, "rollout-window", o.RolloutWindow, "config-triggered rollouts start only while this window is open, e.g. \"Mon-Fri 09:00-17:00 Europe/Berlin\" (windows separated by ;), for readers whose namespace or own "+contract.WindowAnnotation+" annotation sets none; empty: always")
	fs.StringVar(&o.Freeze, "freeze", o.Freeze, "no config-triggered rollout starts during these periods, e.g. \"2026-12-21/2027-01-04 Europe/Berlin\" (several separated by ;), unless a changed source is marked "+contract.UrgentAnnotation)
}

// Windows reads --rollout-window and --freeze; Validate reports their
// errors.
func (o Options) Windows() (window.Cluster, error) {
	var c window.Cluster
	var errs []error
	if o.RolloutWindow != "" {
		s, err := window.Parse(o.RolloutWindow)
		if err != nil {
			errs = append(errs, fmt.Errorf("--rollout-window: %w", err))
		} else {
			c.Window = &s
		}
	}
	if o.Freeze != "" {
		fs, err := window.ParseFreezes(o.Freeze)
		if err != nil {
			errs = append(errs, fmt.Errorf("--freeze: %w", err))
		}
		c.Freezes = fs
	}
	return c, errors.Join(errs...)
}

// Validate reports every setting out of range, each error naming its flag.
func (o Options) Validate() error {
	var errs []error
	if o.CoalesceWindow < 0 {
		errs = append(errs, errors.New("--coalesce-window must be >= 0"))
	}
	if o.CoalesceMax < o.CoalesceWindow {
		errs = append(errs, errors.New("--coalesce-max must be >= --coalesce-window"))
	}
	// NaN fails too (every comparison with it is false): a limiter of NaN
	// or +Inf lets every write through.
	if !(o.WritesPerSecond > 0) || math.IsInf(o.WritesPerSecond, 0) {
		errs = append(errs, errors.New("--writes-per-second must be > 0 and finite"))
	}
	if o.WritesBurst < 1 {
		errs = append(errs, errors.New("--writes-burst must be >= 1"))
	}
	if o.FlapLimit < 1 {
		errs = append(errs, errors.New("--flap-limit must be >= 1"))
	}
	if o.FlapWindow <= 0 {
		errs = append(errs, errors.New("--flap-window must be > 0"))
	}
	if o.FlapQuiet <= 0 {
		errs = append(errs, errors.New("--flap-quiet must be > 0"))
	}
	if o.FlapMaxQuiet < o.FlapQuiet {
		errs = append(errs, errors.New("--flap-quiet-max must be >= --flap-quiet"))
	}
	if o.Workers < 1 {
		errs = append(errs, errors.New("--hook-workers must be >= 1"))
	}
	if o.MaxWaveSize < 0 {
		errs = append(errs, errors.New("--max-wave-size must be >= 0"))
	}
	if o.MaxConcurrentRollouts < 0 {
		errs = append(errs, errors.New("--max-concurrent-rollouts must be >= 0"))
	}
	if o.RolloutTimeout < 0 {
		errs = append(errs, errors.New("--rollout-timeout must be >= 0"))
	}
	if o.RolloutSoak < 0 {
		errs = append(errs, errors.New("--rollout-soak must be >= 0"))
	}
	if _, err := o.Windows(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
