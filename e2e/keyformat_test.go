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
	"github.com/confighash/confighash/hashkey"
	"github.com/confighash/confighash/status"
	"github.com/confighash/confighash/workload"
)

var keyRef = types.NamespacedName{Namespace: framework.Namespace, Name: "confighash-hmac-key"}

// legacyChecksum computes, with confighash's key, the v1 stamp a release
// before v2 gave spec in ns: what a cluster upgraded from v1 holds.
func legacyChecksum(t *testing.T, ns string, spec *corev1.PodSpec) string {
	t.Helper()
	ctx := specContext(t)
	key, err := hashkey.Ensure(ctx, env.Client, keyRef)
	if err != nil {
		t.Fatal(err)
	}
	refs, err := hasher.References(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := hasher.LegacyChecksumV1(key, refs, func(s hasher.Source) (hasher.Content, bool, error) {
		var obj client.Object = &corev1.ConfigMap{}
		if s.Kind == hasher.Secret {
			obj = &corev1.Secret{}
		}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: s.Name}, obj); err != nil {
			return hasher.Content{}, false, client.IgnoreNotFound(err)
		}
		if cm, ok := obj.(*corev1.ConfigMap); ok {
			return hasher.ConfigMapContent(cm), true, nil
		}
		return hasher.SecretContent(obj.(*corev1.Secret)), true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.Checksum
}

// TestUpgradeFromV1StampsRollsNothing: Deployments stamped by a v1 release
// (created while confighash is down, with the v1 stamp in the template, as
// the v1 webhook left them) do not roll when v2 starts; one whose v1 stamp
// is of older content is caught up once; a later config change moves the
// kept one to v2, once.
func TestUpgradeFromV1StampsRollsNothing(t *testing.T) {
	f := newFixture(t)
	spec := readerSpec()
	current := legacyChecksum(t, f.ns, &spec)
	f.setSecret(t, "old-password")
	older := legacyChecksum(t, f.ns, &spec)
	f.setSecret(t, "hunter2")
	expectReplicaSets(t, f.ns, "app", 1)

	stopConfighash(t)
	kept, stale := deploymentOf(f.ns, "v1-current", readerSpec()), deploymentOf(f.ns, "v1-older", readerSpec())
	kept.Spec.Template.Annotations = map[string]string{workload.ChecksumAnnotation: current}
	stale.Spec.Template.Annotations = map[string]string{workload.ChecksumAnnotation: older}
	create(t, kept, client.FieldOwner(workload.FieldManager))
	create(t, stale, client.FieldOwner(workload.FieldManager))
	expectReplicaSets(t, f.ns, "v1-current", 1)
	expectReplicaSets(t, f.ns, "v1-older", 1)
	startConfighash(t)

	expectReplicaSets(t, f.ns, "v1-current", 1)
	if got := stampOf(t, kept); got != current {
		t.Errorf("v1 stamp of the current content became %q", got)
	}
	expectReplicaSets(t, f.ns, "v1-older", 2)
	if got, want := stampOf(t, stale), expectedChecksum(t, f.ns, &spec, nil); got != want {
		t.Errorf("v1 stamp of older content: stamp %q, want the v2 stamp %q", got, want)
	}
	expectReplicaSets(t, f.ns, "app", 1)

	t.Run("status calls the kept v1 stamp current", func(t *testing.T) {
		w := statusOf(t, f.ns, "deployment/v1-current", 0)
		if w.State != status.StateCurrent || !strings.Contains(w.Reason, "legacy v1") {
			t.Errorf("status = %s (%s), want current, legacy v1", w.State, w.Reason)
		}
		expectReplicaSets(t, f.ns, "v1-current", 1)
	})
	t.Run("the next config change writes v2, once", func(t *testing.T) {
		f.setSecret(t, "rotated")
		expectReplicaSets(t, f.ns, "v1-current", 2)
		if got, want := stampOf(t, kept), expectedChecksum(t, f.ns, &spec, nil); got != want {
			t.Errorf("stamp after the change = %q, want %q", got, want)
		}
	})
}

// TestKeySecretDeletedWhileRunningIsRestored: the running replica puts the
// key back, so nothing else happens.
func TestKeySecretDeletedWhileRunningIsRestored(t *testing.T) {
	f := newFixture(t)
	ctx := specContext(t)
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
	if evs := events(t, framework.Namespace, keyRef.Name, hashkey.ReasonKeyRestored); len(evs) == 0 {
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
	oldStamp := stampOf(t, f.app)
	oldID, _ := hasher.StampKeyID(oldStamp)

	stopConfighash(t)
	remove(t, &corev1.Secret{ObjectMeta: keyObjectMeta()})
	startConfighash(t)

	expectReplicaSets(t, f.ns, "app", 1)
	if got := stampOf(t, f.app); got != oldStamp {
		t.Errorf("stamp changed from %q to %q", oldStamp, got)
	}
	newKey := &corev1.Secret{}
	if err := env.Client.Get(specContext(t), keyRef, newKey); err != nil {
		t.Fatal(err)
	}
	newID := hasher.KeyID(newKey.Data[hashkey.DataKey])
	if newID == oldID {
		t.Fatalf("the key did not change (%s): nothing tested", newID)
	}
	var evs []corev1.Event
	err := wait.PollUntilContextTimeout(specContext(t), 200*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		evs = events(t, f.ns, "app", "KeyChanged")
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
		f.setCM(t, "a", "after-key-loss")
		expectReplicaSets(t, f.ns, "app", 2)
		if got, want := stampOf(t, f.app), expectedChecksum(t, f.ns, &spec, nil); got != want {
			t.Errorf("stamp = %q, want %q", got, want)
		}
	})
}

func keyObjectMeta() metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: keyRef.Namespace, Name: keyRef.Name}
}
