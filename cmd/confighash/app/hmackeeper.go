package app

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/hashkey"
)

// addKeyKeeper holds this replica to the key in the Secret: a deleted
// Secret is put back with the key in use, a Secret without a usable key is
// reported and the key in use kept, and another valid key stops the
// manager after this replica's restart delay, so the process exits and its
// restart stamps with that key. With leader election the leader restarts
// last (see hashkey.Keeper.RestartWindow). live must be uncached: the
// manager's cache keeps Secrets as digests only.
func addKeyKeeper(mgr manager.Manager, reg prometheus.Registerer, live client.Client, ref types.NamespacedName, key []byte, leaderElect bool) error {
	m, err := hashkey.NewMetrics(reg)
	if err != nil {
		return err
	}
	k := &hashkey.Keeper{Client: live, Ref: ref, Key: key, Events: mgr.GetEventRecorder(contract.EventSource), Metrics: m}
	if leaderElect {
		k.Elected = mgr.Elected()
	}
	if err := mgr.Add(k); err != nil {
		return fmt.Errorf("adding hmac key keeper: %w", err)
	}
	return nil
}
