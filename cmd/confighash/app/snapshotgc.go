package app

import (
	"fmt"

	"k8s.io/client-go/metadata"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/snapshotgc"
)

// addSnapshotGC runs the snapshots' lifetime controller on the leader
// (--pinning). It reads pods and snapshots live and writes through its own
// client: the manager's cache holds neither.
func addSnapshotGC(mgr manager.Manager, key []byte, policy injection.Policy, o Options, namespaces injection.Getter) error {
	md, err := metadata.NewForConfigAndClient(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return fmt.Errorf("building the snapshot controller's metadata client: %w", err)
	}
	live, err := client.New(mgr.GetConfig(), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient()})
	if err != nil {
		return fmt.Errorf("building the snapshot controller's client: %w", err)
	}
	m, err := snapshotgc.NewMetrics(metrics.Registry)
	if err != nil {
		return err
	}
	c, err := snapshotgc.New(snapshotgc.Config{Metadata: md, WatchNamespaces: o.Namespaces, Client: live, Namespaces: namespaces, Policy: policy, Key: key, Metrics: m})
	if err != nil {
		return err
	}
	if err := mgr.Add(c); err != nil {
		return fmt.Errorf("adding the snapshot controller: %w", err)
	}
	return nil
}
