package snapshotgc

import (
	"strconv"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/confighash/confighash/hasher"
)

func TestPlan(t *testing.T) {
	cm := hasher.Source{Kind: hasher.ConfigMap, Name: "app-pin-1"}
	rs := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", UID: "rs-1"}
	cr := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ControllerRevision", Name: "s-abc", UID: "cr-1"}
	podOf := func(name string, ctl types.UID) reader {
		return reader{Name: name, UID: types.UID("uid-" + name), Controller: ctl}
	}
	for _, tc := range []struct {
		name     string
		owners   []metav1.OwnerReference
		readers  []reader
		complete bool
		delete   bool
		add      []string
	}{
		{name: "owned by the readers' revision", owners: []metav1.OwnerReference{rs}, readers: []reader{podOf("a", "rs-1")}, complete: true},
		{name: "no owner, no reader: deleted", complete: true, delete: true},
		{name: "no owner, no reader, a look at part of the pods: kept"},
		{name: "owned, no reader: the collector's", owners: []metav1.OwnerReference{rs}, complete: true},
		{name: "orphaned pods own it", readers: []reader{podOf("a", ""), podOf("b", "")}, complete: true, add: []string{"a", "b"}},
		{name: "pods of a deleted revision, their ref not yet stripped", readers: []reader{podOf("a", "rs-gone")}, complete: true, add: []string{"a"}},
		{name: "another revision still owns it", owners: []metav1.OwnerReference{rs}, readers: []reader{podOf("a", "rs-1"), podOf("b", "")}, add: []string{"b"}},
		{name: "a StatefulSet's pod, its ControllerRevision an owner", owners: []metav1.OwnerReference{cr}, readers: []reader{{Name: "s-0", UID: "uid-s-0", Controller: "sts", Revision: "s-abc"}}, complete: true},
		{name: "a StatefulSet's pod, another ControllerRevision an owner", owners: []metav1.OwnerReference{cr}, readers: []reader{{Name: "s-0", UID: "uid-s-0", Controller: "sts", Revision: "s-def"}}, complete: true, add: []string{"s-0"}},
		{name: "a pod already an owner", owners: []metav1.OwnerReference{{Kind: "Pod", Name: "a", UID: "uid-a"}}, readers: []reader{podOf("a", "")}, complete: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := snapshot{Source: cm, UID: "snap", Owners: tc.owners}
			got := plan([]snapshot{s}, map[hasher.Source][]reader{cm: tc.readers}, tc.complete)
			var del bool
			var add []string
			for _, a := range got {
				del = del || a.delete
				for _, o := range a.owners {
					if o.Kind != "Pod" || o.APIVersion != "v1" || o.UID != types.UID("uid-"+o.Name) || o.Controller != nil || o.BlockOwnerDeletion != nil {
						t.Errorf("owner %+v", o)
					}
					add = append(add, o.Name)
				}
			}
			if del != tc.delete || len(add) != len(tc.add) {
				t.Fatalf("delete %v, add %v; want %v, %v", del, add, tc.delete, tc.add)
			}
			for i := range add {
				if add[i] != tc.add[i] {
					t.Fatalf("add %v, want %v", add, tc.add)
				}
			}
		})
	}
}

// TestPlanBoundsOwners: a snapshot read by more pods than maxOwners gets
// owners up to the bound, and the rest are counted.
func TestPlanBoundsOwners(t *testing.T) {
	cm := hasher.Source{Kind: hasher.ConfigMap, Name: "app-pin-1"}
	var rs []reader
	for i := range maxOwners + 10 {
		rs = append(rs, reader{Name: "p", UID: types.UID(strconv.Itoa(i))})
	}
	got := plan([]snapshot{{Source: cm, Owners: []metav1.OwnerReference{{UID: "x"}}}}, map[hasher.Source][]reader{cm: rs}, true)
	if len(got) != 1 || len(got[0].owners) != maxOwners-1 || got[0].dropped != 11 {
		t.Fatalf("got %d actions, %d owners, %d dropped", len(got), len(got[0].owners), got[0].dropped)
	}
}
