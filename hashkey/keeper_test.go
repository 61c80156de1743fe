package hashkey

import (
	"bytes"
	"context"
	"errors"
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
			wantEvent: "Warning KeyChanged the Secret now holds key " + hasher.KeyID(otherKey),
		},
		"no key in the Secret: stop stamping with ours, never overwrite": {
			objects:     []client.Object{keySecret([]byte{})},
			wantChanged: true, wantErr: true, wantResult: resultChanged, wantKey: []byte{},
			wantEvent: "Warning KeyChanged the Secret now holds key none",
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
				for _, secret := range [][]byte{keyInUse, otherKey} {
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
