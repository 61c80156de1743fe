package pinner

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/pinning"
)

// TestResultNamesTheWorkload: once the revision is read, the result names
// its controller, pinned or not, so that the webhook's Event goes to the
// Deployment a user looks at, not to its ReplicaSet.
func TestResultNamesTheWorkload(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	pod := w.revision("web-1", template())
	rs := &appsv1.ReplicaSet{}
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-1"}, rs); err != nil {
		t.Fatal(err)
	}
	yes := true
	rs.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "uid-web", Controller: &yes}}
	if err := w.c.Update(ctx, rs); err != nil {
		t.Fatal(err)
	}
	if res := w.p.Pin(ctx, pod, false); res.Reason != Pinned || res.Workload == nil || res.Workload.Name != "web" || res.Workload.Kind != "Deployment" {
		t.Fatalf("pinned: %+v, want the Deployment web as its workload", res)
	}
	rs.Annotations = map[string]string{pinning.PinAnnotation: pinning.PinOff}
	if err := w.c.Update(ctx, rs); err != nil {
		t.Fatal(err)
	}
	if res := w.p.Pin(ctx, pod, false); res.Reason != OptedOut || res.Workload == nil || res.Workload.UID != "uid-web" {
		t.Fatalf("opted out: %+v, want the Deployment web as its workload", res)
	}
}
