package hashkey

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/hasher"
)

// Event reasons on the key Secret. They name key IDs, never key bytes.
const (
	ReasonKeyRestored = "KeyRestored"
	ReasonKeyChanged  = "KeyChanged"
)

// DefaultInterval is how often a Keeper re-reads the key Secret, and so the
// longest two replicas can stamp with different keys. One GET per replica
// per interval is next to nothing; a watch would need a second cache for a
// single object.
const DefaultInterval = 5 * time.Second

// KeyChangedError is returned by Keeper.Start when the Secret holds a key
// other than the one this process stamps with. The process must exit: the
// restart reads the new key, so that no two replicas keep stamping with
// different keys.
type KeyChangedError struct {
	Secret types.NamespacedName
	// KeyID is the ID of the key in the Secret ("none" when it holds no
	// key), InUse that of the key this process stamps with.
	KeyID, InUse string
}

func (e *KeyChangedError) Error() string {
	return fmt.Sprintf("hmac key secret %s holds key %s, not %s in use; restart to use it", e.Secret, e.KeyID, e.InUse)
}

// Keeper holds one replica to the key in the Secret after start-up. Run it
// on every replica (it does not need leader election).
//
//   - The Secret is gone: the Keeper creates it again with the key it holds.
//     Every running replica holds the same key, so whichever is first puts
//     back the key the cluster's stamps were made with, and a replica that
//     starts later reads it instead of making a new one. Nothing rolls.
//   - The Secret holds another key (a deliberate rotation, or a replica
//     that started while the Secret was gone and created one): Start returns
//     a *KeyChangedError, and the replica restarts onto that key.
//
// Both are loud: a log line, a Warning Event on the Secret and
// confighash_hmac_key_checks_total.
type Keeper struct {
	// Client must be live: the manager's cache slims Secrets to digests.
	Client   client.Client
	Ref      types.NamespacedName
	Key      []byte
	Interval time.Duration
	// Events may be nil.
	Events  events.EventRecorder
	Metrics *Metrics
}

// NeedLeaderElection reports false: every replica stamps, so every replica
// must hold the same key.
func (k *Keeper) NeedLeaderElection() bool { return false }

// Start re-reads the key Secret every Interval until ctx ends. It returns a
// *KeyChangedError when the Secret holds another key.
func (k *Keeper) Start(ctx context.Context) error {
	interval := k.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	k.Metrics.keyInUse(hasher.KeyID(k.Key))
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			var changed *KeyChangedError
			if err := k.Check(ctx); errors.As(err, &changed) {
				return err
			}
		}
	}
}

// Check reads the Secret once and acts on what it finds; see Keeper. Errors
// other than *KeyChangedError are transient: the key is kept and the next check
// tries again.
func (k *Keeper) Check(ctx context.Context) error {
	logger := log.FromContext(ctx).WithValues("secret", k.Ref, "keyID", hasher.KeyID(k.Key))
	s := &corev1.Secret{}
	err := k.Client.Get(ctx, k.Ref, s)
	switch {
	case apierrors.IsNotFound(err):
		return k.restore(ctx)
	case err != nil:
		k.Metrics.check(resultError)
		logger.Error(err, "reading hmac key secret; keeping the key in use")
		return fmt.Errorf("reading hmac key secret %s: %w", k.Ref, err)
	case bytes.Equal(s.Data[DataKey], k.Key):
		k.Metrics.check(resultSame)
		return nil
	}
	newID := "none"
	if len(s.Data[DataKey]) > 0 {
		newID = hasher.KeyID(s.Data[DataKey])
	}
	changed := &KeyChangedError{Secret: k.Ref, KeyID: newID, InUse: hasher.KeyID(k.Key)}
	k.Metrics.check(resultChanged)
	logger.Error(changed, "hmac key secret changed under a running replica; existing stamps stay until their config changes (KeyChanged on the workloads)")
	k.event(s, ReasonKeyChanged, "the Secret now holds key %s; a replica stamping with key %s restarts to use it", newID, changed.InUse)
	return changed
}

// restore creates the Secret again with the key in use. AlreadyExists means
// another replica (or a person) was first; the next check compares.
func (k *Keeper) restore(ctx context.Context) error {
	logger := log.FromContext(ctx).WithValues("secret", k.Ref, "keyID", hasher.KeyID(k.Key))
	s := newSecret(k.Ref, k.Key)
	err := k.Client.Create(ctx, s)
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	if err != nil {
		k.Metrics.check(resultError)
		logger.Error(err, "hmac key secret is gone and could not be restored; keeping the key in use")
		return fmt.Errorf("restoring hmac key secret %s: %w", k.Ref, err)
	}
	k.Metrics.check(resultRestored)
	logger.Info("hmac key secret was deleted; restored it with the key in use, so that no replica creates a new one and nothing rolls")
	k.event(s, ReasonKeyRestored, "the Secret was deleted while confighash ran; restored key %s (to rotate the key, write a new one into this Secret instead)", hasher.KeyID(k.Key))
	return nil
}

func (k *Keeper) event(s *corev1.Secret, reason, note string, args ...any) {
	if k.Events != nil {
		k.Events.Eventf(s, nil, corev1.EventTypeWarning, reason, "HMACKey", note, args...)
	}
}
