package snapshotgc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/pinning"
)

// DefaultCoalesce is how long a lost owner waits for the others of its
// namespace: the collector patches an orphaned revision's dependents one
// by one, pods and snapshots alike.
const DefaultCoalesce = 2 * time.Second

// Config is what the controller reads and writes with.
type Config struct {
	// Metadata lists and watches the snapshots, metadata only: in
	// WatchNamespaces (--namespaces), or in all namespaces when empty.
	Metadata        metadata.Interface
	WatchNamespaces []string
	// Client reads pods and snapshots live, and patches and deletes
	// snapshots.
	Client client.Client
	// Namespaces reads a Namespace; Policy decides with its labels
	// whether it is served. Only served namespaces labelled for pinning
	// are looked at.
	Namespaces injection.Getter
	Policy     injection.Policy
	// Key is confighash's HMAC key: a snapshot is deleted only once its
	// name verifies under it.
	Key []byte
	// Coalesce is DefaultCoalesce when zero.
	Coalesce time.Duration
	// Metrics, when set, counts the snapshots per namespace.
	Metrics *Metrics
}

// Controller keeps snapshots owned while pods read them and deletes those
// nothing owns or reads. It is a manager.Runnable for the leader.
type Controller struct {
	cfg       Config
	log       logr.Logger
	factories []metadatainformer.SharedInformerFactory
	informers map[hasher.Kind][]cache.SharedIndexInformer
	queue     workqueue.TypedRateLimitingInterface[string]
}

// New builds the controller and its informers, not started.
func New(cfg Config) (*Controller, error) {
	if cfg.Coalesce == 0 {
		cfg.Coalesce = DefaultCoalesce
	}
	c := &Controller{cfg: cfg, log: log.Log.WithName("snapshotgc")}
	c.informers = map[hasher.Kind][]cache.SharedIndexInformer{}
	namespaces := cfg.WatchNamespaces
	if len(namespaces) == 0 {
		namespaces = []string{corev1.NamespaceAll}
	}
	for _, ns := range namespaces {
		f := metadatainformer.NewFilteredSharedInformerFactory(cfg.Metadata, 0, ns, selectSnapshots)
		c.factories = append(c.factories, f)
		for kind, res := range map[hasher.Kind]string{hasher.ConfigMap: "configmaps", hasher.Secret: "secrets"} {
			inf := f.ForResource(corev1.SchemeGroupVersion.WithResource(res)).Informer()
			if err := inf.SetTransform(slim); err != nil {
				return nil, fmt.Errorf("snapshot informer: %w", err)
			}
			if _, err := inf.AddEventHandler(c.handler()); err != nil {
				return nil, fmt.Errorf("snapshot informer: %w", err)
			}
			c.informers[kind] = append(c.informers[kind], inf)
		}
	}
	return c, nil
}

// NeedLeaderElection is true: one writer, the leader.
func (c *Controller) NeedLeaderElection() bool { return true }

// Start runs the informers and one worker until ctx ends.
func (c *Controller) Start(ctx context.Context) error {
	ctx = log.IntoContext(ctx, c.log)
	// Made here, not in New: a replica that never leads runs no queue, and
	// one whose context ends before the informers sync leaves none behind.
	c.queue = workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
	defer c.queue.ShutDown()
	for _, f := range c.factories {
		f.Start(ctx.Done())
		defer f.Shutdown()
	}
	for _, infs := range c.informers {
		for _, inf := range infs {
			if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
				return nil // ctx ended
			}
		}
	}
	go func() {
		<-ctx.Done()
		c.queue.ShutDown()
	}()
	for c.next(ctx) {
	}
	return nil
}

// next looks at one namespace; false once the queue is shut down.
func (c *Controller) next(ctx context.Context) bool {
	ns, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(ns)
	if err := c.reconcile(ctx, ns); err != nil {
		if !errors.Is(err, errChanged) {
			c.log.Error(err, "keeping the snapshots of a namespace", "namespace", ns)
		}
		c.queue.AddRateLimited(ns)
		return true
	}
	c.queue.Forget(ns)
	return true
}

// reconcile makes namespace's snapshots owned by what reads them, and
// deletes those nothing owns or reads.
func (c *Controller) reconcile(ctx context.Context, namespace string) error {
	if ok, err := c.pins(ctx, namespace); !ok || err != nil {
		return err
	}
	snaps := c.snapshotsOf(namespace)
	if len(snaps) == 0 {
		return nil
	}
	set := make(map[hasher.Source]bool, len(snaps))
	for _, s := range snaps {
		set[s.Source] = true
	}
	readers, complete, err := c.readers(ctx, namespace, set)
	if err != nil {
		return err
	}
	if !complete {
		c.log.Info("more pods than one look reads: owners added for those read, nothing deleted", "namespace", namespace, "pods", podPage*maxPodPages)
	}
	var errs []error
	for _, a := range plan(snaps, readers, complete) {
		if a.dropped > 0 {
			c.log.Info("a snapshot has as many owners as it may: pods left out", "namespace", namespace, "snapshot", a.snapshot.Source.String(), "pods", a.dropped)
		}
		if err := c.apply(ctx, namespace, a); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// pins reports whether namespace is served and labelled for pinning.
func (c *Controller) pins(ctx context.Context, namespace string) (bool, error) {
	if c.cfg.Policy.Excluded(namespace) {
		return false, nil
	}
	ns := &corev1.Namespace{}
	err := c.cfg.Namespaces.Get(ctx, client.ObjectKey{Name: namespace}, ns)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading namespace %s: %w", namespace, err)
	}
	return c.cfg.Policy.Decide(namespace, ns.Labels).Serves && pinning.NamespacePins(ns.Labels), nil
}
