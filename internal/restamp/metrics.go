package restamp

import (
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/confighash/confighash/internal/workload"
)

// Re-stamp reasons, as the reason label of confighash_hook_restamps_total
// and the "reason" field of the "re-stamped" log line.
const (
	// restampChanged: a source the workload reads changed.
	restampChanged = "changed"
	// restampFirstStamp: the template carried no stamp.
	restampFirstStamp = "first_stamp"
	// restampRecheck: a re-check (start-up replay, or after a template
	// write) found the stamp stale.
	restampRecheck = "recheck"
)

// Reasons a differing stamp is kept, as the reason label of
// confighash_hook_stamps_kept_total.
const (
	// keptOtherKey: the stamp was made under another HMAC key (see stale).
	keptOtherKey = "other_key"
	// keptCacheBehind: the cache was behind the apiserver (see confirmLive).
	keptCacheBehind = "cache_behind"
	// keptIgnoreToggled: the stamp differs only because a source's
	// contract.IgnoreAnnotation was added or removed (see keepAcrossIgnore).
	keptIgnoreToggled = "ignore_toggled"
	// keptIgnoredSource: a re-check of a workload that reads an ignored
	// source, whose stamp cannot be told stale (see keepAcrossIgnore).
	keptIgnoredSource = "ignored_source"
)

// Metrics are the hook's Prometheus series, all named
// confighash_hook_<name>.
type Metrics struct {
	Restamps  *prometheus.CounterVec
	Holds     *prometheus.CounterVec
	Checksums prometheus.Counter
	Missing   *prometheus.CounterVec
	// Kept counts differing stamps left alone because only confighash
	// changed (format or HMAC key), not the content (see stale), or
	// because the cache was behind the apiserver (see confirmLive).
	Kept *prometheus.CounterVec
	// KindRefused is 1 for a custom kind the hook refuses to watch (its
	// template path leads nowhere in its CRD's schema), 0 otherwise.
	KindRefused *prometheus.GaugeVec
	// Halted counts rollouts that failed and halted their change;
	// HaltedChanges is the changes halted now, InFlight the config-triggered
	// rollouts in progress (what --max-concurrent-rollouts bounds).
	Halted        *prometheus.CounterVec
	HaltedChanges prometheus.Gauge
	InFlight      prometheus.Gauge
	// Budget is what the write budget allows at once now, read from the
	// limiter setBudget hands it at each scrape (0 before).
	Budget prometheus.GaugeFunc
	budget atomic.Pointer[rate.Limiter]
	// WaitingWindow and WaitingFreeze are the readers whose change waits
	// for a window or a freeze (confighash_hook_readers_waiting by reason),
	// and WaitLongest the longest such wait now, each read at a scrape from
	// the tracker setWaits hands it (wave_window.go), not at each
	// reconcile.
	WaitingWindow, WaitingFreeze prometheus.GaugeFunc
	WaitLongest                  prometheus.GaugeFunc
	waits                        atomic.Pointer[windowWaits]
}

// Reasons a change waits, as the reason label of
// confighash_hook_readers_waiting.
const (
	waitingWindow = "window"
	waitingFreeze = "freeze"
)

// NewMetrics creates the series and registers them on reg. A second
// registration on the same reg fails: each caller brings its own registry.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Restamps: counterVec("confighash_hook_restamps_total",
			"Workload pod templates re-stamped by the config-update hook, by kind, the workload's namespace, and reason: changed, first_stamp, recheck.",
			"kind", "namespace", "reason"),
		Holds: counterVec("confighash_hook_flap_holds_total",
			"Re-stamps withheld because the workload was re-stamped too often (flap hold), by kind.",
			"kind"),
		Checksums: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "confighash_hook_checksum_computations_total",
			Help: "Checksums computed by the config-update hook.",
		}),
		Missing: counterVec("confighash_hook_missing_source_total",
			"Re-checks that found a required source missing and kept the stamp, by kind.",
			"kind"),
		Kept: counterVec("confighash_hook_stamps_kept_total",
			"Re-checks that kept a stamp made under another HMAC key (other_key), from content newer than this replica's cache (cache_behind), or because of the ignore annotation (ignore_toggled: only an annotation changed; ignored_source: a re-check of a workload that reads an ignored source), instead of rolling, by kind and reason.",
			"kind", "reason"),
		KindRefused: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "confighash_hook_workload_kind_refused",
			Help: "1 for a custom workload kind the hook refuses to watch because its template path is not in its CRD's schema (its objects are stamped but never re-stamped), 0 for one it watches or waits for; by kind.",
		}, []string{"kind"}),
		Halted: counterVec("confighash_hook_rollouts_halted_total",
			"Config-triggered rollouts that failed (a new pod crash-looping or unable to start, the progress deadline, --rollout-timeout) and halted their change's waves, by kind.",
			"kind"),
		HaltedChanges: gauge("confighash_hook_halted_changes",
			"Source changes whose waves are halted now, on this replica (the leader)."),
		InFlight: gauge("confighash_hook_rollouts_in_flight",
			"Config-triggered rollouts in progress, which --max-concurrent-rollouts bounds, on this replica (the leader)."),
	}
	m.Budget = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "confighash_hook_write_budget_available",
		Help: "Re-stamps the global write budget allows at once now (--writes-burst at most, refilled at --writes-per-second), on this replica.",
	}, func() float64 {
		if l := m.budget.Load(); l != nil {
			return l.Tokens()
		}
		return 0
	})
	waiting := func(reason string, of func(windows, freezes int) int) prometheus.GaugeFunc {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "confighash_hook_readers_waiting",
			Help:        "Readers whose config change waits for a rollout window to open (window) or a freeze to end (freeze), on this replica (the leader).",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, func() float64 {
			w, f, _ := m.waits.Load().counts(time.Now())
			return float64(of(w, f))
		})
	}
	m.WaitingWindow = waiting(waitingWindow, func(w, _ int) int { return w })
	m.WaitingFreeze = waiting(waitingFreeze, func(_, f int) int { return f })
	m.WaitLongest = prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "confighash_hook_window_wait_longest_seconds",
		Help: "How long the reader that has waited longest for a rollout window or the end of a freeze has waited, on this replica (the leader; counted from when it saw the wait).",
	}, func() float64 {
		_, _, longest := m.waits.Load().counts(time.Now())
		return longest.Seconds()
	})
	if err := errors.Join(reg.Register(m.Budget), reg.Register(m.WaitingWindow), reg.Register(m.WaitingFreeze), reg.Register(m.WaitLongest), reg.Register(m.Restamps), reg.Register(m.Holds), reg.Register(m.Checksums),
		reg.Register(m.Missing), reg.Register(m.Kept), reg.Register(m.KindRefused),
		reg.Register(m.Halted), reg.Register(m.HaltedChanges), reg.Register(m.InFlight)); err != nil {
		return nil, fmt.Errorf("registering hook metrics: %w", err)
	}
	return m, nil
}

func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

func gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

// setBudget is the limiter Budget reports on.
func (m *Metrics) setBudget(l *rate.Limiter) {
	if m != nil {
		m.budget.Store(l)
	}
}

// setWaits is the tracker WaitingWindow, WaitingFreeze and WaitLongest
// report on.
func (m *Metrics) setWaits(w *windowWaits) {
	if m != nil {
		m.waits.Store(w)
	}
}

// zero creates every counter's child for kinds at 0 (but the re-stamps',
// whose namespaces are not known in advance), so that each series
// exists from the start: an alert on increase() then sees the first event
// (a series born at 1 shows no increase), and a dashboard has series to
// show before anything happened.
func (m *Metrics) zero(kinds []workload.Kind) {
	if m == nil {
		return
	}
	for _, k := range kinds {
		kind := k.Name()
		for _, reason := range []string{keptOtherKey, keptCacheBehind, keptIgnoreToggled, keptIgnoredSource} {
			m.Kept.WithLabelValues(kind, reason)
		}
		m.Holds.WithLabelValues(kind)
		m.Missing.WithLabelValues(kind)
		m.Halted.WithLabelValues(kind)
	}
}

// A hook without metrics counts nothing.

func (m *Metrics) restamped(kind, namespace, reason string) {
	if m != nil {
		m.Restamps.WithLabelValues(kind, namespace, reason).Inc()
	}
}

func (m *Metrics) held(kind string) {
	if m != nil {
		m.Holds.WithLabelValues(kind).Inc()
	}
}

func (m *Metrics) checksum() {
	if m != nil {
		m.Checksums.Inc()
	}
}

func (m *Metrics) missing(kind string) {
	if m != nil {
		m.Missing.WithLabelValues(kind).Inc()
	}
}

func (m *Metrics) kept(kind, reason string) {
	if m != nil {
		m.Kept.WithLabelValues(kind, reason).Inc()
	}
}

func (m *Metrics) kindRefused(kind string, refused bool) {
	if m != nil {
		v := 0.0
		if refused {
			v = 1
		}
		m.KindRefused.WithLabelValues(kind).Set(v)
	}
}

func (m *Metrics) halted(kind string) {
	if m != nil {
		m.Halted.WithLabelValues(kind).Inc()
	}
}

func (m *Metrics) inFlight(p *planner) {
	if m != nil && p != nil {
		n, h := p.counts()
		m.InFlight.Set(float64(n))
		m.HaltedChanges.Set(float64(h))
	}
}
