package snapshotgc

import (
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/pinning"
)

// selectSnapshots makes the informers list and watch snapshots only.
func selectSnapshots(o *metav1.ListOptions) {
	o.LabelSelector = pinning.SnapshotLabel + "=true"
}

// slim keeps of a snapshot what the controller reads: its identity and
// owners. Its labels (a seal per stamp it serves) and annotations are
// dropped, so what a snapshot costs in the cache is bounded by its owners.
func slim(obj any) (any, error) {
	if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
		m.ManagedFields, m.Labels, m.Annotations = nil, nil, nil
	}
	return obj, nil
}

// handler queues a snapshot's namespace when the snapshot may have come
// to be read by a pod its owners do not account for: it lost an owner (a
// revision deleted, with its pods orphaned or not), or has none. Every
// namespace with a snapshot is looked at once when the controller starts,
// for what happened while no leader watched.
func (c *Controller) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			m, ok := obj.(*metav1.PartialObjectMetadata)
			if !ok {
				return
			}
			c.cfg.Metrics.count(m.Namespace, 1)
			if initial || len(m.OwnerReferences) == 0 {
				c.queue.AddAfter(m.Namespace, c.cfg.Coalesce)
			}
		},
		UpdateFunc: func(old, cur any) {
			o, ok1 := old.(*metav1.PartialObjectMetadata)
			n, ok2 := cur.(*metav1.PartialObjectMetadata)
			if ok1 && ok2 && lostOwner(o.OwnerReferences, n.OwnerReferences) {
				c.queue.AddAfter(n.Namespace, c.cfg.Coalesce)
			}
		},
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
				c.cfg.Metrics.count(m.Namespace, -1)
			}
		},
	}
}

// lostOwner reports whether an owner in old is not in cur, or cur has none.
func lostOwner(old, cur []metav1.OwnerReference) bool {
	if len(cur) == 0 {
		return true
	}
	for _, o := range old {
		if !slices.ContainsFunc(cur, func(r metav1.OwnerReference) bool { return r.UID == o.UID }) {
			return true
		}
	}
	return false
}

// snapshotsOf lists namespace's snapshots from the informers.
func (c *Controller) snapshotsOf(namespace string) []snapshot {
	var out []snapshot
	for kind, infs := range c.informers {
		for _, inf := range infs {
			objs, err := inf.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
			if err != nil {
				continue // the factory's informers all have the namespace index
			}
			for _, obj := range objs {
				if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
					out = append(out, snapshot{
						Source:          hasher.Source{Kind: kind, Name: m.Name},
						UID:             m.UID,
						ResourceVersion: m.ResourceVersion,
						Owners:          m.OwnerReferences,
					})
				}
			}
		}
	}
	return out
}
