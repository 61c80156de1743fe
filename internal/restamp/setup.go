package restamp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/workload"
)

// RecheckDelay is how long after a workload is written the hook re-checks
// its stamp (on top of the coalescing window). Informer lag is milliseconds;
// a couple of seconds leaves room for a loaded apiserver.
const RecheckDelay = 2 * time.Second

// MaxFlapEntries caps the workloads the flap guard remembers. An entry is
// a few hundred bytes; a cluster with more workloads re-stamped within one
// flap window than this loses only some re-stamp counts (held workloads
// are held again from their annotation).
const MaxFlapEntries = 20000

// Config is what Setup builds the hook from: its settings and what it
// shares with the rest of confighash.
type Config struct {
	Options
	// Key is the HMAC key shared with the webhook.
	Key []byte
	// Policy says which namespaces the hook serves; the webhook uses the
	// same one.
	Policy injection.Policy
	// Metrics takes the hook's metrics, registered once; nil counts
	// nothing.
	Metrics prometheus.Registerer
	// Kinds are the workload kinds confighash serves (workload.NewRegistry
	// resolves them). Probe says when an unstructured one is served; it is
	// required when Kinds has one.
	Kinds workload.Registry
	Probe Probe
	// MaxSourceKeys is the cache's key bound (--max-source-keys), applied
	// to the live reads that confirm a re-check too; at least 1.
	MaxSourceKeys int
	// Self is confighash's own pod, which Events about confighash itself
	// (a custom kind it refuses to watch) are recorded on; nil records
	// none, e.g. out of cluster.
	Self *corev1.ObjectReference
}

// Setup adds the hook's controller to mgr, which runs it on the leader
// only. The workload kinds are indexed by the sources they read, and so
// cached, only there: the built-in ones as the controller starts
// (watch_index.go), custom ones once the apiserver serves them
// (watch_custom.go). Options that do not validate are refused.
func Setup(ctx context.Context, mgr manager.Manager, o Config) error {
	if err := o.Validate(); err != nil {
		return fmt.Errorf("hook options: %w", err)
	}
	if o.MaxSourceKeys < 1 {
		return errors.New("hook options: --max-source-keys must be >= 1")
	}
	var builtin, custom []workload.Kind
	for _, k := range o.Kinds.Mutable() {
		if k.Unstructured() {
			custom = append(custom, k)
		} else {
			builtin = append(builtin, k)
		}
	}
	// The built-in kinds are indexed, and so cached, once the hook's
	// sources start, on the leader only (watch_index.go).
	w := newWatched()
	gate := &indexGate{kinds: builtin, indexer: mgr.GetFieldIndexer(), watched: w}
	var m *Metrics
	if o.Metrics != nil {
		var err error
		if m, err = NewMetrics(o.Metrics); err != nil {
			return err
		}
		m.zero(o.Kinds.Mutable())
	}
	ch := newChanges()
	tg := newToggles(MaxToggleEntries)
	e := &enqueuer{cache: mgr.GetCache(), kinds: w, window: o.CoalesceWindow, coalesceMax: o.CoalesceMax, changes: ch, toggles: tg, now: time.Now}
	flaps := newFlapGuard(o.Options, MaxFlapEntries)
	// The waves (wave_planner.go): a reader that may go once an earlier wave
	// has rolled out is woken through wakes. A full channel drops the
	// wake; the reader's own requeue (waitRecheck) covers it.
	var waves *planner
	wakes := make(chan event.TypedGenericEvent[Request], 1024)
	if o.MaxWaveSize > 0 {
		waves = newPlanner(o.MaxWaveSize, o.MaxConcurrentRollouts, func(r Request) {
			select {
			case wakes <- event.TypedGenericEvent[Request]{Object: r}:
			default:
			}
		})
	}
	r := &reconciler{
		client:   mgr.GetClient(),
		readers:  mgr.GetCache(),
		live:     mgr.GetAPIReader(),
		maxKeys:  o.MaxSourceKeys,
		key:      o.Key,
		kinds:    w,
		budget:   rate.NewLimiter(rate.Limit(o.WritesPerSecond), o.WritesBurst),
		flaps:    flaps,
		changes:  ch,
		toggles:  tg,
		events:   mgr.GetEventRecorder(contract.EventSource),
		metrics:  m,
		policy:   o.Policy,
		now:      time.Now,
		planner:  waves,
		rollouts: rolloutOptions{timeout: o.RolloutTimeout, soak: o.RolloutSoak, poll: rolloutPoll},
		written:  newExpectations(MaxWriteExpectations, time.Now),
		waits:    newWindowWaits(),
	}
	// Validate read them already.
	r.windows, _ = o.Windows()
	m.setBudget(r.budget)
	m.setWaits(r.waits)
	s := &settler{next: r, changes: ch, cache: mgr.GetCache(), kinds: w,
		window: o.CoalesceWindow, coalesceMax: o.CoalesceMax, events: r.events, now: time.Now}
	b := builder.TypedControllerManagedBy[Request](mgr).
		// "hook", the name users see for this part (docs, metrics, logs);
		// restamp is only the package.
		Named("hook").
		// A queue fair across namespaces (queue_fair.go), so that no
		// namespace's flood holds up another's re-stamps.
		WithOptions(controller.TypedOptions[Request]{MaxConcurrentReconciles: o.Workers, NewQueue: newFairQueue}).
		WatchesRawSource(afterIndex{gate, source.TypedKind(mgr.GetCache(), &corev1.ConfigMap{}, handlerFor[*corev1.ConfigMap](e, hasher.ConfigMap))}).
		WatchesRawSource(afterIndex{gate, source.TypedKind(mgr.GetCache(), &corev1.Secret{}, handlerFor[*corev1.Secret](e, hasher.Secret))}).
		WatchesRawSource(source.TypedChannel(wakes, handler.TypedFuncs[Request, Request]{
			GenericFunc: func(_ context.Context, ev event.TypedGenericEvent[Request], q workqueue.TypedRateLimitingInterface[Request]) {
				q.Add(ev.Object)
			},
		}))
	recheck := o.CoalesceWindow + RecheckDelay
	for _, k := range builtin {
		b = b.WatchesRawSource(afterIndex{gate, source.TypedKind(mgr.GetCache(), k.New(), recheckFor(k, recheck, false, waves))})
	}
	c, err := b.Build(s)
	if err != nil {
		return err
	}
	if len(custom) == 0 {
		return nil
	}
	if o.Probe == nil {
		return errors.New("custom workload kinds need a Probe")
	}
	indexed := map[string]bool{} // only the watcher's goroutine uses it
	return mgr.Add(&customWatcher{pending: custom, probe: o.Probe, interval: ProbeInterval,
		events: r.events, self: selfOf(o.Self), metrics: m,
		start: func(ctx context.Context, k workload.Kind) error {
			// The index first: a kind is looked up by readers only once it is
			// in w, and w gets it only once its index exists. Once only: a
			// watch that failed to start is retried without indexing again.
			if !indexed[k.Name()] {
				if err := mgr.GetFieldIndexer().IndexField(ctx, k.New(), sources.ReadersIndex, sources.ReadKeysOf(k)); err != nil {
					return fmt.Errorf("indexing %s by sources: %w", k.Name(), err)
				}
				indexed[k.Name()] = true
				w.add(k)
			}
			// Its initial list re-checks every object of the kind: what
			// changed while the kind was not watched is caught up.
			return c.Watch(source.TypedKind(mgr.GetCache(), k.New(), recheckFor(k, recheck, true, waves)))
		}})
}
