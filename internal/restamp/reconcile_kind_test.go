package restamp

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A request for a kind the reconciler does not know is a terminal error, not
// a panic on a zero Kind, and drops its pending change.
func TestReconcileUnknownKind(t *testing.T) {
	ctx := quietCtx()
	r := &reconciler{client: fake.NewClientBuilder().Build(), kinds: newWatched(), changes: newChanges()}
	req := Request{KindName: "Rollout", NamespacedName: types.NamespacedName{Namespace: "ns", Name: "web"}}
	r.changes.add(req, "configmap/app")
	_, err := r.Reconcile(ctx, req)
	if !errors.Is(err, reconcile.TerminalError(nil)) {
		t.Fatalf("Reconcile = %v, want a terminal error", err)
	}
	if len(r.changes.entries) != 0 {
		t.Errorf("the change is still pending")
	}
}
