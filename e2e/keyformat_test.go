//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/hashkey"
	"github.com/confighash/confighash/internal/status"
)

var keyRef = types.NamespacedName{Namespace: framework.Namespace, Name: "confighash-hmac-key"}

// TestV1StampRollsOnce: confighash compares no v1 stamp (v1 does not bind
// the namespace, and a stored one may have been copied; see hasher's
// Versioning). A Deployment stamped by a release before v2, created while
// confighash is down with a v1 stamp in its template, is re-stamped in v2
// when confighash starts: it rolls once, and then not again. Any v1 stamp
// behaves so, the one a v1 release would have written for this content
// included, so this one is made up.
func TestV1StampRollsOnce(t *testing.T) {
	f := newFixture(t)
	spec := readerSpec()
	expectReplicaSets(t, f.ns, "app", 1)

	stopConfighash(t)
	d := deploymentOf(f.ns, "v1", readerSpec())
	d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: "v1:" + strings.Repeat("ab", 32)}
	env.Create(t, d, client.FieldOwner(contract.FieldManager))
	expectReplicaSets(t, f.ns, "v1", 1)
	startConfighash(t)

	expectReplicaSets(t, f.ns, "v1", 2)
	if got, want := env.StampOf(t, d), expectedChecksum(t, f.ns, &spec, nil); got != want {
		t.Errorf("stamp after the start = %q, want the v2 stamp %q", got, want)
	}
	if w := statusOf(t, f.ns, "deployment/v1", 0); w.State != status.StateCurrent {
		t.Errorf("status = %s (%s), want current", w.State, w.Reason)
	}
	expectReplicaSets(t, f.ns, "app", 1)
}

// TestKeySecretDeletedWhileRunningIsRestored: the running replica puts the
// key back, so nothing else happens.
func TestKeySecretDeletedWhileRunningIsRestored(t *testing.T) {
	f := newFixture(t)
	ctx := env.SpecContext(t)
	before := &corev1.Secret{}
	if err := env.Client.Get(ctx, keyRef, before); err != nil {
		t.Fatal(err)
	}
	remove(t, before)
	after := &corev1.Secret{}
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return env.Client.Get(ctx, keyRef, after) == nil, nil
	})
	if err != nil {
		t.Fatalf("key Secret not restored: %v", err)
	}
	if !bytes.Equal(after.Data[hashkey.DataKey], before.Data[hashkey.DataKey]) {
		t.Errorf("restored key %s, want the one in use %s", hasher.KeyID(after.Data[hashkey.DataKey]), hasher.KeyID(before.Data[hashkey.DataKey]))
	}
	if evs := events(t, framework.Namespace, keyRef.Name, contract.ReasonKeyRestored); len(evs) == 0 {
		t.Error("no KeyRestored event on the Secret")
	}
	restartConfighash(t)
	expectReplicaSets(t, f.ns, "app", 1)
}

// TestKeyLossRollsNothing: the key Secret is deleted while confighash is
// down, so it starts with a new key. Nothing rolls; each workload gets a
// KeyChanged warning; the next config change re-stamps under the new key,
// rolling once.
func TestKeyLossRollsNothing(t *testing.T) {
	f := newFixture(t)
	spec := readerSpec()
	oldStamp := env.StampOf(t, f.app)
	oldID, _ := hasher.StampKeyID(oldStamp)

	stopConfighash(t)
	remove(t, &corev1.Secret{ObjectMeta: keyObjectMeta()})
	startConfighash(t)

	expectReplicaSets(t, f.ns, "app", 1)
	if got := env.StampOf(t, f.app); got != oldStamp {
		t.Errorf("stamp changed from %q to %q", oldStamp, got)
	}
	newKey := &corev1.Secret{}
	if err := env.Client.Get(env.SpecContext(t), keyRef, newKey); err != nil {
		t.Fatal(err)
	}
	newID := hasher.KeyID(newKey.Data[hashkey.DataKey])
	if newID == oldID {
		t.Fatalf("the key did not change (%s): nothing tested", newID)
	}
	var evs []corev1.Event
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		evs = events(t, f.ns, "app", contract.ReasonKeyChanged)
		return len(evs) > 0, nil
	})
	if err != nil {
		t.Fatal("no KeyChanged event on the workload")
	}
	if msg := evs[0].Message; evs[0].Type != corev1.EventTypeWarning || !strings.Contains(msg, oldID) || !strings.Contains(msg, newID) || strings.Contains(msg, "hunter2") {
		t.Errorf("KeyChanged event = %s %q, want a warning naming keys %s and %s, and no value", evs[0].Type, msg, oldID, newID)
	}
	t.Logf("after the key loss: 1 ReplicaSet, stamp kept under key %s, confighash uses key %s; event: %s", oldID, newID, evs[0].Message)

	t.Run("status says it cannot tell", func(t *testing.T) {
		if w := statusOf(t, f.ns, "deployment/app", 0); w.State != status.StateUnknown {
			t.Errorf("status = %s (%s), want unknown", w.State, w.Reason)
		}
	})
	t.Run("the next config change re-stamps under the new key, once", func(t *testing.T) {
		f.setCM(t, "after-key-loss")
		expectReplicaSets(t, f.ns, "app", 2)
		if got, want := env.StampOf(t, f.app), expectedChecksum(t, f.ns, &spec, nil); got != want {
			t.Errorf("stamp = %q, want %q", got, want)
		}
	})
}

func keyObjectMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: keyRef.Namespace, Name: keyRef.Name}
}
