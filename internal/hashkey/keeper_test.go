package hashkey

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/hasher"
)

var (
	keyInUse = []byte("the-key-every-replica-stamps-wit")
	otherKey = []byte("a-key-someone-wrote-into-secret!")
)

func checks(t *testing.T, m *Metrics, result string) float64 {
	t.Helper()
	var out dto.Metric
	if err := m.Checks.WithLabelValues(result).Write(&out); err != nil {
		t.Fatal(err)
	}
	return out.GetCounter().GetValue()
}

func newKeeper(t *testing.T, c client.Client) (*Keeper, *events.FakeRecorder) {
	t.Helper()
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	rec := events.NewFakeRecorder(10)
	return &Keeper{Client: c, Ref: ref, Key: keyInUse, Interval: time.Millisecond, Events: rec, Metrics: m}, rec
}

func drain(rec *events.FakeRecorder) []string {
	close(rec.Events)
	var out []string
	for e := range rec.Events {
		out = append(out, e)
	}
	return out
}

// TestKeyDeletedWhileRunning is the key-loss story: the Secret is deleted
// while replicas run, then a replica restarts. Without the Keeper, that
// replica's Ensure creates a new key and stamps with it alongside the
// others' old one, and the leader would re-stamp every workload.
func TestKeyDeletedWhileRunning(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().WithObjects(keySecret(keyInUse)).Build()
	k, rec := newKeeper(t, c)

	if err := c.Delete(ctx, keySecret(nil)); err != nil {
		t.Fatal(err)
	}
	if err := k.Check(ctx); err != nil {
		t.Fatalf("Check: %v", err)
	}
	restarted, err := Ensure(ctx, c, ref)
	if err != nil {
		t.Fatalf("Ensure on the restarted replica: %v", err)
	}
	if !bytes.Equal(restarted, keyInUse) {
		t.Errorf("the restarted replica stamps with key %s, the running ones with %s", hasher.KeyID(restarted), hasher.KeyID(keyInUse))
	}
	if got := checks(t, k.Metrics, resultRestored); got != 1 {
		t.Errorf("checks{result=restored} = %v, want 1", got)
	}
	evs := drain(rec)
	want := "Warning KeyRestored the Secret was deleted while confighash ran; restored key " + hasher.KeyID(keyInUse)
	if len(evs) != 1 || !strings.HasPrefix(evs[0], want) {
		t.Errorf("events = %q, want one starting %q", evs, want)
	}
	if s := stored(t, c); s.Labels["app.kubernetes.io/name"] != "confighash" {
		t.Errorf("restored Secret lacks its label: %v", s.Labels)
	}
}

func TestKeeperCheck(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, ref.Name, errors.New("rbac"))
	tests := map[string]struct {
		objects     []client.Object
		funcs       interceptor.Funcs
		wantChanged bool // a *KeyChangedError
		wantInvalid bool // an *InvalidKeyError
		wantErr     bool // any error
		wantResult  string
		wantEvent   string
		wantKey     []byte // in the Secret afterwards; nil: no Secret
	}{
		"same key": {
			objects: []client.Object{keySecret(keyInUse)}, wantResult: resultSame, wantKey: keyInUse,
		},
		"another key: restart onto it, never overwrite it": {
			objects:     []client.Object{keySecret(otherKey)},
			wantChanged: true, wantErr: true, wantResult: resultChanged, wantKey: otherKey,
		},
		// A restart would refuse these (Ensure's check), so every replica
		// would crash-loop: keep stamping with ours, never overwrite.
		"empty key: keep ours": {
			objects: []client.Object{keySecret([]byte{})},
			wantErr: true, wantInvalid: true, wantResult: resultInvalid, wantKey: []byte{},
			wantEvent: `Warning KeyInvalid key "hmac-key" has 0 bytes, want at least 32; running replicas keep stamping with key ` + hasher.KeyID(keyInUse),
		},
		"short key: keep ours": {
			objects: []client.Object{keySecret(otherKey[:16])},
			wantErr: true, wantInvalid: true, wantResult: resultInvalid, wantKey: otherKey[:16],
			wantEvent: `Warning KeyInvalid key "hmac-key" has 16 bytes, want at least 32`,
		},
		"key under the wrong data key: keep ours": {
			objects: []client.Object{&corev1.Secret{ObjectMeta: keySecret(nil).ObjectMeta, Data: map[string][]byte{"hmac_key": otherKey}}},
			wantErr: true, wantInvalid: true, wantResult: resultInvalid,
			wantEvent: `Warning KeyInvalid no data key "hmac-key" (1 other data keys)`,
		},
		"deleted: restored": {
			wantResult: resultRestored, wantKey: keyInUse, wantEvent: "Warning KeyRestored",
		},
		"deleted, and another replica restored it first": {
			funcs: interceptor.Funcs{Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if err := c.Create(ctx, keySecret(keyInUse), opts...); err != nil {
					return err
				}
				return c.Create(ctx, obj, opts...)
			}},
			wantKey: keyInUse,
		},
		"unreadable: keep the key, try again": {
			objects: []client.Object{keySecret(keyInUse)},
			funcs: interceptor.Funcs{Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
				return forbidden
			}},
			wantErr: true, wantResult: resultError, wantKey: keyInUse,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			base := fake.NewClientBuilder().WithObjects(tc.objects...).Build()
			k, rec := newKeeper(t, interceptor.NewClient(base, tc.funcs))
			err := k.Check(ctx)
			var changed *KeyChangedError
			if got := errors.As(err, &changed); got != tc.wantChanged {
				t.Errorf("Check = %v; KeyChangedError %v, want %v", err, got, tc.wantChanged)
			}
			var invalid *InvalidKeyError
			if got := errors.As(err, &invalid); got != tc.wantInvalid {
				t.Errorf("Check = %v; InvalidKeyError %v, want %v", err, got, tc.wantInvalid)
			}
			if (err != nil) != tc.wantErr {
				t.Errorf("Check = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantResult != "" {
				if got := checks(t, k.Metrics, tc.wantResult); got != 1 {
					t.Errorf("checks{result=%s} = %v, want 1", tc.wantResult, got)
				}
			}
			s := &corev1.Secret{}
			if err := base.Get(ctx, ref, s); err != nil {
				t.Fatalf("reading the Secret back: %v", err)
			}
			if !bytes.Equal(s.Data[DataKey], tc.wantKey) {
				t.Errorf("Secret holds key %q, want %q", s.Data[DataKey], tc.wantKey)
			}
			evs := drain(rec)
			switch {
			case tc.wantEvent == "" && len(evs) > 0:
				t.Errorf("events = %q, want none", evs)
			case tc.wantEvent != "" && (len(evs) != 1 || !strings.HasPrefix(evs[0], tc.wantEvent)):
				t.Errorf("events = %q, want one starting %q", evs, tc.wantEvent)
			}
			for _, e := range evs {
				for _, secret := range [][]byte{keyInUse, otherKey, otherKey[:16]} {
					if strings.Contains(e, string(secret)) {
						t.Errorf("event %q reveals a key", e)
					}
				}
			}
		})
	}
}

// TestKeeperStartStopsOnAnotherKey: a replica whose key is no longer the
// Secret's stops (and is restarted) rather than keep stamping with it.
func TestKeeperStartStopsOnAnotherKey(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(keySecret(keyInUse)).Build()
	k, _ := newKeeper(t, c)
	k.Rand = func(int64) int64 { return 0 } // no delay
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- k.Start(ctx) }()

	s := stored(t, c)
	s.Data[DataKey] = otherKey
	if err := c.Update(ctx, s); err != nil {
		t.Fatal(err)
	}
	err := <-done
	var changed *KeyChangedError
	if !errors.As(err, &changed) {
		t.Fatalf("Start = %v, want a KeyChangedError", err)
	}
	if changed.KeyID != hasher.KeyID(otherKey) || changed.InUse != hasher.KeyID(keyInUse) {
		t.Errorf("KeyChangedError = %+v", changed)
	}
}

// setKey writes data into the key Secret, as a person's kubectl apply would.
func setKey(t *testing.T, c client.Client, data map[string][]byte) {
	t.Helper()
	s := stored(t, c)
	s.Data = data
	if err := c.Update(context.Background(), s); err != nil {
		t.Fatal(err)
	}
}

// TestKeeperKeepsServingOnInvalidKey: a typo in the Secret (short, empty,
// under the wrong data key) must not stop a running replica, whose restart
// would refuse the Secret: every replica would crash-loop at once. Start
// keeps running through many reads, reports once, and counts every read.
func TestKeeperKeepsServingOnInvalidKey(t *testing.T) {
	for name, data := range map[string]map[string][]byte{
		"short":          {DataKey: otherKey[:31]},
		"empty":          {DataKey: {}},
		"wrong data key": {"hmac_key": otherKey},
		"no data":        nil,
	} {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithObjects(keySecret(keyInUse)).Build()
			k, rec := newKeeper(t, c)
			k.Rand = func(int64) int64 { return 0 } // a valid key would restart at once
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- k.Start(ctx) }()

			setKey(t, c, data)
			for checks(t, k.Metrics, resultInvalid) < 5 {
				select {
				case err := <-done:
					t.Fatalf("Start returned %v on an invalid key; the replica would restart into a crash loop", err)
				case <-time.After(time.Millisecond):
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Start = %v after ctx ended", err)
			}
			evs := drain(rec)
			if len(evs) != 1 || !strings.HasPrefix(evs[0], "Warning KeyInvalid ") {
				t.Errorf("events = %q, want one KeyInvalid (not one per read)", evs)
			}
		})
	}
}

// ticker drives Keeper.tick with explicit times.
type ticker struct {
	t   *testing.T
	k   *Keeper
	now time.Time
}

func (tk *ticker) at(d time.Duration) error {
	tk.t.Helper()
	return tk.k.tick(context.Background(), tk.now.Add(d))
}

// TestKeeperStaggersRestart: a valid new key restarts this replica only
// after its own delay, and only if the Secret still holds a valid new key
// then.
func TestKeeperStaggersRestart(t *testing.T) {
	const window = time.Minute
	c := fake.NewClientBuilder().WithObjects(keySecret(keyInUse)).Build()
	k, rec := newKeeper(t, c)
	k.RestartWindow = window
	k.Rand = func(n int64) int64 { return n / 2 } // 30 s without leader election
	tk := &ticker{t: t, k: k, now: time.Now()}

	setKey(t, c, map[string][]byte{DataKey: otherKey})
	for _, d := range []time.Duration{0, time.Second, 30*time.Second - time.Millisecond} {
		if err := tk.at(d); err != nil {
			t.Fatalf("tick at %s = %v; the delay is 30s", d, err)
		}
	}
	var changed *KeyChangedError
	if err := tk.at(30 * time.Second); !errors.As(err, &changed) || changed.KeyID != hasher.KeyID(otherKey) {
		t.Fatalf("tick at 30s = %v, want a KeyChangedError for the new key", err)
	}
	evs := drain(rec)
	want := "Warning KeyChanged the Secret now holds key " + hasher.KeyID(otherKey) + "; a replica stamping with key " + hasher.KeyID(keyInUse) + " restarts to use it in 30s"
	if len(evs) != 1 || !strings.HasPrefix(evs[0], want) {
		t.Errorf("events = %q, want one starting %q", evs, want)
	}
}

// TestKeeperCallsOffRestart: the Secret changed back, or to something
// invalid, before the delay passed: nothing restarts. A later valid key
// starts a new delay.
func TestKeeperCallsOffRestart(t *testing.T) {
	for name, data := range map[string]map[string][]byte{
		"changed back":   {DataKey: keyInUse},
		"then a typo":    {DataKey: []byte("short")},
		"data key moved": {"key": otherKey},
	} {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithObjects(keySecret(keyInUse)).Build()
			k, _ := newKeeper(t, c)
			k.RestartWindow = time.Minute
			k.Rand = func(int64) int64 { return int64(10 * time.Second) }
			tk := &ticker{t: t, k: k, now: time.Now()}

			setKey(t, c, map[string][]byte{DataKey: otherKey})
			if err := tk.at(0); err != nil {
				t.Fatal(err)
			}
			setKey(t, c, data)
			for _, d := range []time.Duration{5 * time.Second, 10 * time.Second, time.Hour} {
				if err := tk.at(d); errors.As(err, new(*KeyChangedError)) {
					t.Fatalf("tick at %s = %v: restarted although the Secret no longer holds a usable new key", d, err)
				}
			}
			setKey(t, c, map[string][]byte{DataKey: otherKey})
			if err := tk.at(time.Hour + time.Second); err != nil {
				t.Fatalf("a new key after the restart was called off restarted without a delay: %v", err)
			}
			if err := tk.at(time.Hour + 11*time.Second); !errors.As(err, new(*KeyChangedError)) {
				t.Errorf("tick after the new delay = %v, want a KeyChangedError", err)
			}
		})
	}
}

// TestRestartDelay: with leader election the followers restart in the
// first half of the window and the leader last, at its end, so one replica
// on either key serves throughout; without it, anywhere in the window.
func TestRestartDelay(t *testing.T) {
	const window = time.Minute
	elected, notYet := make(chan struct{}), make(chan struct{})
	close(elected)
	tests := map[string]struct {
		elected <-chan struct{}
		want    time.Duration // with Rand returning its bound less one
	}{
		"no leader election": {nil, window - 1},
		"follower":           {notYet, window/2 - 1},
		"leader":             {elected, window},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			k := &Keeper{RestartWindow: window, Elected: tc.elected, Rand: func(n int64) int64 { return n - 1 }}
			if got := k.restartDelay(); got != tc.want {
				t.Errorf("restartDelay = %s, want %s", got, tc.want)
			}
		})
	}
	// The default source stays in bounds.
	k := &Keeper{Elected: notYet}
	for range 100 {
		if d := k.restartDelay(); d < 0 || d >= DefaultRestartWindow/2 {
			t.Fatalf("follower delay %s outside [0, %s)", d, DefaultRestartWindow/2)
		}
	}
}

// TestKeeperAndEnsureAgree: the running replica calls a Secret invalid
// exactly when a starting one would refuse it (one check for both).
func TestKeeperAndEnsureAgree(t *testing.T) {
	for _, data := range []map[string][]byte{
		{DataKey: otherKey}, {DataKey: otherKey[:31]}, {DataKey: append(otherKey, "more"...)},
		{DataKey: {}}, {"hmac_key": otherKey}, nil,
	} {
		c := fake.NewClientBuilder().WithObjects(&corev1.Secret{ObjectMeta: keySecret(nil).ObjectMeta, Data: data}).Build()
		k, _ := newKeeper(t, c)
		_, ensureErr := Ensure(context.Background(), c, ref)
		checkErr := k.Check(context.Background())
		if refused, invalid := ensureErr != nil, errors.As(checkErr, new(*InvalidKeyError)); refused != invalid {
			t.Errorf("data keys %v: Ensure = %v, Check = %v", slices.Sorted(maps.Keys(data)), ensureErr, checkErr)
		}
	}
}
