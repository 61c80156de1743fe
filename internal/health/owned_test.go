package health

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

func TestOwned(t *testing.T) {
	pod := func(name, kind, owner string, uid types.UID) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if kind != "" {
			p.OwnerReferences = []metav1.OwnerReference{{Kind: kind, Name: owner, UID: uid, Controller: ptr.To(true)}}
		}
		return p
	}
	pods := []corev1.Pod{
		pod("web-1", "ReplicaSet", "web-5d8f7c9b4", "rs1"),
		pod("webapi-1", "ReplicaSet", "web-api-6c9d8f7b5", "rs2"),
		pod("web2-1", "ReplicaSet", "web2-7f6d5c4b3", "rs3"),
		pod("loose", "", "", ""),
		pod("db-0", "StatefulSet", "db", "sts-uid"),
	}
	names := func(ps []corev1.Pod) []string {
		var n []string
		for _, p := range ps {
			n = append(n, p.Name)
		}
		return n
	}
	web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", UID: "dep-uid"}}
	if got := names(Owned(web, pods)); !slices.Equal(got, []string{"web-1"}) {
		t.Errorf("Owned(web) = %v, want [web-1]", got)
	}
	db := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", UID: "sts-uid"}}
	if got := names(Owned(db, pods)); !slices.Equal(got, []string{"db-0"}) {
		t.Errorf("Owned(db) = %v, want [db-0]", got)
	}
}
