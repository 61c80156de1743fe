package snapshotgc

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestLostOwner(t *testing.T) {
	a, b := metav1.OwnerReference{UID: "a"}, metav1.OwnerReference{UID: "b"}
	for _, tc := range []struct {
		old, cur []metav1.OwnerReference
		want     bool
	}{
		{old: []metav1.OwnerReference{a}, cur: []metav1.OwnerReference{a, b}, want: false},
		{old: []metav1.OwnerReference{a, b}, cur: []metav1.OwnerReference{b}, want: true},
		{old: []metav1.OwnerReference{a}, cur: nil, want: true},
		{old: nil, cur: nil, want: true},
		{old: []metav1.OwnerReference{a}, cur: []metav1.OwnerReference{a}, want: false},
	} {
		if got := lostOwner(tc.old, tc.cur); got != tc.want {
			t.Errorf("lostOwner(%v, %v) = %v", tc.old, tc.cur, got)
		}
	}
}

// TestSlimKeepsWhatThePlanReads: the cache keeps a snapshot's identity and
// owners, none of its labels (one per stamp it serves) or annotations.
func TestSlimKeepsWhatThePlanReads(t *testing.T) {
	m := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{
		Name: "s", Namespace: "n", UID: "u", ResourceVersion: "7",
		Labels: map[string]string{"a": "b"}, Annotations: map[string]string{"c": "d"},
		ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "x"}},
		OwnerReferences: []metav1.OwnerReference{{UID: "o"}},
	}}
	out, err := slim(m)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*metav1.PartialObjectMetadata)
	if got.Labels != nil || got.Annotations != nil || got.ManagedFields != nil || got.UID != "u" || got.ResourceVersion != "7" || len(got.OwnerReferences) != 1 {
		t.Fatalf("slim kept %+v", got.ObjectMeta)
	}
}
