package snapshotgc

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/confighash/confighash/hasher"
)

// maxOwners bounds a snapshot's owner references (each some 150 bytes of
// its metadata): pods are added as owners up to it. The pods past it are
// logged; the snapshot then lives as long as the pods that made it in.
const maxOwners = 512

// snapshot is what a plan needs of one snapshot, from the informer.
type snapshot struct {
	hasher.Source   // its own kind and name, not its source's
	UID             types.UID
	ResourceVersion string
	Owners          []metav1.OwnerReference
}

// reader is a pod that names a snapshot in its spec.
type reader struct {
	Name string
	UID  types.UID
	// Controller is the UID of the pod's controller, "" when it has none
	// (orphaned). For a ReplicaSet's or a Job's pod it is the revision
	// the pinner made an owner.
	Controller types.UID
	// Revision is the name of the ControllerRevision the pod was made
	// from, for a StatefulSet's or DaemonSet's pod: the pinner makes that
	// revision the owner, not the pod's controller.
	Revision string
}

// coveredBy reports whether one of owners keeps r's snapshot for it: the
// pod itself, its controller, or its ControllerRevision.
func (r reader) coveredBy(owners []metav1.OwnerReference) bool {
	for _, o := range owners {
		if o.UID == r.UID || (r.Controller != "" && o.UID == r.Controller) ||
			(r.Revision != "" && o.Kind == "ControllerRevision" && o.APIVersion == "apps/v1" && o.Name == r.Revision) {
			return true
		}
	}
	return false
}

// action is one write to one snapshot: delete it, or add pods as owners.
type action struct {
	snapshot snapshot
	delete   bool
	owners   []metav1.OwnerReference
	// dropped counts the uncovered readers left out by maxOwners.
	dropped int
}

// plan decides the writes for a namespace's snapshots from the pods that
// read them. A pod is covered when it, or its controller, owns the
// snapshot; each uncovered pod is added. A snapshot with no owner and no
// reader is deleted, but only when readers is the whole namespace
// (complete): a pod not looked at may read it.
func plan(snaps []snapshot, readers map[hasher.Source][]reader, complete bool) []action {
	var out []action
	for _, s := range snaps {
		rs := readers[s.Source]
		if len(s.Owners) == 0 && len(rs) == 0 {
			if complete {
				out = append(out, action{snapshot: s, delete: true})
			}
			continue
		}
		a := action{snapshot: s}
		added := map[types.UID]bool{}
		for _, r := range rs {
			if added[r.UID] || r.coveredBy(s.Owners) {
				continue
			}
			if len(s.Owners)+len(a.owners) >= maxOwners {
				a.dropped++
				continue
			}
			added[r.UID] = true
			a.owners = append(a.owners, metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: r.Name, UID: r.UID})
		}
		if len(a.owners) > 0 || a.dropped > 0 {
			out = append(out, a)
		}
	}
	return out
}
