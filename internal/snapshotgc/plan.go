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

// owners indexes a snapshot's owners the ways a reader can be covered: by
// UID (the pod, its ReplicaSet or Job), and ControllerRevisions by name.
type owners struct {
	uids      map[types.UID]bool
	revisions map[string]bool
}

func ownersOf(refs []metav1.OwnerReference) owners {
	o := owners{uids: make(map[types.UID]bool, len(refs)), revisions: map[string]bool{}}
	for _, r := range refs {
		o.uids[r.UID] = true
		if r.APIVersion == "apps/v1" && r.Kind == "ControllerRevision" {
			o.revisions[r.Name] = true
		}
	}
	return o
}

// covers reports whether an owner keeps the snapshot for r: the pod
// itself, its controller, or its ControllerRevision.
func (o owners) covers(r reader) bool {
	return o.uids[r.UID] || (r.Controller != "" && o.uids[r.Controller]) || (r.Revision != "" && o.revisions[r.Revision])
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
		have := ownersOf(s.Owners)
		for _, r := range rs {
			if have.covers(r) {
				continue
			}
			if len(s.Owners)+len(a.owners) >= maxOwners {
				a.dropped++
				continue
			}
			have.uids[r.UID] = true
			a.owners = append(a.owners, metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: r.Name, UID: r.UID})
		}
		if len(a.owners) > 0 || a.dropped > 0 {
			out = append(out, a)
		}
	}
	return out
}
