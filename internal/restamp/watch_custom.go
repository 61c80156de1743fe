package restamp

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

// Probe reports whether the apiserver serves a custom kind. An error that
// wraps ErrBadKind is a configuration error that waiting will not fix;
// others are retried.
type Probe func(ctx context.Context, k workload.Kind) (served bool, err error)

// ErrBadKind marks a Probe error about the kind's configuration.
var ErrBadKind = errors.New("bad workload kind")

// ProbeInterval is how often the hook looks for custom kinds it does not
// watch yet. Installing a CRD is rare; ten seconds is prompt enough, and the
// start-up replay of the new watch catches up what changed meanwhile.
const ProbeInterval = 10 * time.Second

// customWatcher starts the hook's watch of each custom kind once the
// apiserver serves it. A watch on a kind the apiserver does not serve would
// never sync and would stop the manager, so it cannot simply be added at
// start-up: confighash must run on clusters without Argo Rollouts, and a
// CRD installed later must be picked up without a restart.
//
// A kind it refuses (ErrBadKind) is loud: besides the log line, a Warning
// Event on self (confighash's pod, when known) and the gauge
// confighash_hook_workload_kind_refused at 1 until the kind is watched. Its
// objects are still stamped on create and update, but never re-stamped,
// which is easy to miss; `confighash status` runs the same check and says so.
type customWatcher struct {
	pending  []workload.Kind
	probe    Probe
	start    func(ctx context.Context, k workload.Kind) error
	interval time.Duration
	// events and self record the refusal Event; either nil records none.
	events  events.EventRecorder
	self    runtime.Object
	metrics *Metrics
}

// NeedLeaderElection: the watches feed the hook, which runs on the leader.
func (c *customWatcher) NeedLeaderElection() bool { return true }

func (c *customWatcher) Start(ctx context.Context) error {
	logger := log.FromContext(ctx).WithName("custom-kinds")
	reported := map[string]string{}
	tick := time.NewTicker(c.interval)
	defer tick.Stop()
	for {
		c.pending = c.round(log.IntoContext(ctx, logger), reported)
		if len(c.pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// round tries each pending kind once and returns those still pending. Each
// distinct problem with a kind is logged once, not every round.
func (c *customWatcher) round(ctx context.Context, reported map[string]string) []workload.Kind {
	logger := log.FromContext(ctx)
	var still []workload.Kind
	for _, k := range c.pending {
		served, err := c.probe(ctx, k)
		if err == nil && served {
			err = c.start(ctx, k)
			if err == nil {
				logger.Info("watching custom workload kind", "kind", k.Name())
				c.metrics.kindRefused(k.Name(), false)
				continue
			}
		}
		still = append(still, k)
		c.metrics.kindRefused(k.Name(), errors.Is(err, ErrBadKind))
		msg := "not served yet; watched once its CustomResourceDefinition is installed"
		if err != nil {
			msg = err.Error()
		}
		if reported[k.Name()] == msg {
			continue
		}
		reported[k.Name()] = msg
		switch {
		case errors.Is(err, ErrBadKind):
			logger.Error(err, "not watching custom workload kind until its configuration or CRD is fixed", "kind", k.Name())
			if c.events != nil && c.self != nil {
				c.events.Eventf(c.self, nil, corev1.EventTypeWarning, contract.ReasonKindNotWatched, "WatchKind",
					"not watching %s: %s; its objects are stamped on create and update but not re-stamped when their ConfigMaps and Secrets change",
					k.Name(), err.Error())
			}
		case err != nil:
			logger.Error(err, "cannot watch custom workload kind yet; retrying", "kind", k.Name())
		default:
			logger.Info(msg, "kind", k.Name())
		}
	}
	return still
}

// selfOf is ref as the object Events are recorded on: nil for none (a nil
// *ObjectReference in an interface would not be nil).
func selfOf(ref *corev1.ObjectReference) runtime.Object {
	if ref == nil {
		return nil
	}
	return ref
}
