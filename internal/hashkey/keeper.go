package hashkey

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
)

// DefaultInterval is how often a Keeper re-reads the key Secret. One GET
// per replica per interval is next to nothing; a watch would need a second
// cache for a single object.
const DefaultInterval = 5 * time.Second

// DefaultRestartWindow bounds how long a replica waits, after it has seen a
// new valid key, before it restarts onto it (see Keeper.RestartWindow).
const DefaultRestartWindow = time.Minute

// KeyChangedError is returned by Keeper.Start when the Secret holds a valid
// key other than the one this process stamps with, and this replica's
// restart delay has passed. The process must exit: the restart reads the
// new key, so that no two replicas keep stamping with different keys.
type KeyChangedError struct {
	Secret types.NamespacedName
	// KeyID is the ID of the key in the Secret, InUse that of the key this
	// process stamps with.
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
//   - The Secret holds another valid key (a deliberate rotation, or a
//     replica that started while the Secret was gone and created one): the
//     replica restarts onto it after a delay of its own (RestartWindow), so
//     that the replicas do not all restart at once. Start then returns a
//     *KeyChangedError.
//   - The Secret holds no usable key (no data key hmac-key, or fewer than 32
//     bytes; Ensure's check): the replica keeps serving with the key it
//     holds, since a restart would refuse the Secret and crash-loop. A
//     pending restart is called off. It touches nothing: the Secret is the
//     person's to fix.
//
// All are loud: a log line and a Warning Event on the Secret when the state
// changes, and confighash_hmac_key_checks_total on every read.
type Keeper struct {
	// Client must be live: the manager's cache slims Secrets to digests.
	Client   client.Client
	Ref      types.NamespacedName
	Key      []byte
	Interval time.Duration
	// RestartWindow spreads the restarts onto a new key (0:
	// DefaultRestartWindow). With leader election (Elected set), a
	// follower waits a random time in [0, RestartWindow/2) and the leader
	// the whole RestartWindow, so the leader, which also serves the
	// webhook, goes last, once the followers are back on the new key.
	// Without it, every replica waits a random time in [0, RestartWindow).
	// Replicas stamp with different keys for at most RestartWindow plus
	// one Interval.
	RestartWindow time.Duration
	// Elected, when set, is closed once this replica leads
	// (manager.Elected()). nil: no leader election.
	Elected <-chan struct{}
	// Rand returns a uniform number in [0, n) (nil: math/rand/v2.Int64N).
	Rand func(n int64) int64
	// Events may be nil.
	Events  events.EventRecorder
	Metrics *Metrics

	// Only Start's goroutine touches these.
	restartAt time.Time // zero: no restart pending
	invalid   string    // the invalid-key reason last reported, if any
}

// NeedLeaderElection reports false: every replica stamps, so every replica
// must hold the same key.
func (k *Keeper) NeedLeaderElection() bool { return false }

// Start re-reads the key Secret every Interval until ctx ends. It returns a
// *KeyChangedError when the Secret holds another valid key and this
// replica's restart delay has passed.
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
		case now := <-t.C:
			if err := k.tick(ctx, now); err != nil {
				return err
			}
		}
	}
}

// tick is one re-read at now. It returns a *KeyChangedError once a restart
// is due: only when this very read found a valid other key, so a Secret
// that became invalid, or went back to the key in use, during the delay
// restarts nothing.
func (k *Keeper) tick(ctx context.Context, now time.Time) error {
	s, err := k.check(ctx)
	var changed *KeyChangedError
	var invalid *InvalidKeyError
	switch {
	case errors.As(err, &changed):
		logger := log.FromContext(ctx).WithValues("secret", k.Ref, "keyID", changed.InUse, "newKeyID", changed.KeyID)
		if k.restartAt.IsZero() {
			delay := k.restartDelay()
			k.restartAt = now.Add(delay)
			logger.Info("hmac key secret holds a new key; restarting onto it after a delay, so that the replicas do not restart at once", "delay", delay)
			k.event(s, contract.ReasonKeyChanged,
				"the Secret now holds key %s; a replica stamping with key %s restarts to use it in %s", changed.KeyID, changed.InUse, delay.Round(time.Second))
			return nil
		}
		if now.Before(k.restartAt) {
			return nil
		}
		logger.Info("restarting onto the new hmac key; existing stamps stay until their config changes (KeyChanged on the workloads)")
		return changed
	case err == nil, errors.As(err, &invalid):
		if !k.restartAt.IsZero() {
			log.FromContext(ctx).Info("hmac key secret no longer holds a usable new key; the pending restart is called off", "secret", k.Ref)
			k.restartAt = time.Time{}
		}
	}
	// A transient error leaves a pending restart as it is: the next read
	// decides.
	return nil
}

// restartDelay is this replica's wait before a restart onto a new key; see
// Keeper.RestartWindow.
func (k *Keeper) restartDelay() time.Duration {
	window := k.RestartWindow
	if window <= 0 {
		window = DefaultRestartWindow
	}
	random := k.Rand
	if random == nil {
		random = rand.Int64N
	}
	upTo := func(d time.Duration) time.Duration {
		if d <= 0 {
			return 0
		}
		return time.Duration(random(int64(d)))
	}
	if k.Elected == nil {
		return upTo(window)
	}
	select {
	case <-k.Elected:
		return window
	default:
		return upTo(window / 2)
	}
}

// Check reads the Secret once and reports what it holds: nil for the key in
// use (or a deleted Secret, which it restores), a *KeyChangedError for
// another valid key, an *InvalidKeyError for a Secret without a usable key
// (reported once per reason). Other errors are transient: the key is kept
// and the next check tries again.
func (k *Keeper) Check(ctx context.Context) error {
	_, err := k.check(ctx)
	return err
}

// check is Check, also returning the Secret read (nil when none was).
func (k *Keeper) check(ctx context.Context) (*corev1.Secret, error) {
	logger := log.FromContext(ctx).WithValues("secret", k.Ref, "keyID", hasher.KeyID(k.Key))
	s := &corev1.Secret{}
	err := k.Client.Get(ctx, k.Ref, s)
	switch {
	case apierrors.IsNotFound(err):
		k.invalid = ""
		return nil, k.restore(ctx)
	case err != nil:
		k.Metrics.check(resultError)
		logger.Error(err, "reading hmac key secret; keeping the key in use")
		return nil, fmt.Errorf("reading hmac key secret %s: %w", k.Ref, err)
	}
	key, err := keyOf(k.Ref, s)
	var invalid *InvalidKeyError
	if errors.As(err, &invalid) {
		k.Metrics.check(resultInvalid)
		if k.invalid != invalid.Reason {
			k.invalid = invalid.Reason
			logger.Error(invalid, "hmac key secret holds no usable key; keeping the key in use. Replicas that start now fail until it is fixed",
				"dataKeys", dataKeys(s))
			k.event(s, contract.ReasonKeyInvalid, "%s; running replicas keep stamping with key %s, and a replica that starts now fails until this is fixed",
				invalid.Reason, hasher.KeyID(k.Key))
		}
		return s, err
	}
	if k.invalid != "" {
		k.invalid = ""
		logger.Info("hmac key secret holds a usable key again")
	}
	if bytes.Equal(key, k.Key) {
		k.Metrics.check(resultSame)
		return s, nil
	}
	k.Metrics.check(resultChanged)
	return s, &KeyChangedError{Secret: k.Ref, KeyID: hasher.KeyID(key), InUse: hasher.KeyID(k.Key)}
}

// dataKeys lists the Secret's data keys (names only), for the log line of
// an invalid key: a key written under the wrong name shows there.
func dataKeys(s *corev1.Secret) []string {
	return slices.Sorted(maps.Keys(s.Data))
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
	k.event(s, contract.ReasonKeyRestored, "the Secret was deleted while confighash ran; restored key %s (to rotate the key, write a new one into this Secret instead)", hasher.KeyID(k.Key))
	return nil
}

func (k *Keeper) event(s *corev1.Secret, reason, note string, args ...any) {
	if k.Events != nil {
		k.Events.Eventf(s, nil, corev1.EventTypeWarning, reason, "HMACKey", note, args...)
	}
}
