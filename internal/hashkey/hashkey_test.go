package hashkey

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

var ref = types.NamespacedName{Namespace: "confighash-system", Name: "confighash-hmac-key"}

func keySecret(key []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace},
		Data:       map[string][]byte{DataKey: key},
	}
}

func stored(t *testing.T, c client.Client) *corev1.Secret {
	t.Helper()
	s := &corev1.Secret{}
	if err := c.Get(context.Background(), ref, s); err != nil {
		t.Fatalf("reading the key secret back: %v", err)
	}
	return s
}

func TestEnsureCreatesKey(t *testing.T) {
	ctx := context.Background()
	c := fake.NewClientBuilder().Build()
	key, err := Ensure(ctx, c, ref)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if len(key) != 32 {
		t.Fatalf("created key has %d bytes, want 32", len(key))
	}
	if bytes.Equal(key, make([]byte, 32)) {
		t.Errorf("created key is all zeros")
	}
	s := stored(t, c)
	if !bytes.Equal(s.Data[DataKey], key) {
		t.Errorf("stored key %x differs from returned key %x", s.Data[DataKey], key)
	}
	if s.Type != corev1.SecretTypeOpaque {
		t.Errorf("secret type = %q, want %q", s.Type, corev1.SecretTypeOpaque)
	}
	if got := s.Labels["app.kubernetes.io/name"]; got != "confighash" {
		t.Errorf("label app.kubernetes.io/name = %q, want confighash", got)
	}

	again, err := Ensure(ctx, c, ref)
	if err != nil {
		t.Fatalf("second Ensure: %v", err)
	}
	if !bytes.Equal(again, key) {
		t.Errorf("second Ensure returned %x, want the stored key %x", again, key)
	}

	// Another installation (another secret name) gets its own key.
	other, err := Ensure(ctx, c, types.NamespacedName{Namespace: ref.Namespace, Name: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(other, key) {
		t.Errorf("two fresh keys are equal: %x", key)
	}
}

func TestEnsureExistingSecret(t *testing.T) {
	long := []byte("0123456789abcdef0123456789abcdef-and-more")
	tests := map[string]struct {
		secret  *corev1.Secret
		want    []byte
		wantErr string
	}{
		"32 bytes": {
			secret: keySecret(long[:32]),
			want:   long[:32],
		},
		"longer than 32 bytes": {
			secret: keySecret(long),
			want:   long,
		},
		"31 bytes": {
			secret:  keySecret(long[:31]),
			wantErr: `hmac key secret confighash-system/confighash-hmac-key: key "hmac-key" has 31 bytes, want at least 32`,
		},
		"empty key": {
			secret:  keySecret([]byte{}),
			wantErr: `key "hmac-key" has 0 bytes, want at least 32`,
		},
		"no key in the secret": {
			secret: &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Namespace: ref.Namespace},
				Data:       map[string][]byte{"other": long},
			},
			wantErr: `no data key "hmac-key" (1 other data keys)`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithObjects(tc.secret).Build()
			key, err := Ensure(context.Background(), c, ref)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Ensure error = %v, want one containing %q", err, tc.wantErr)
				}
				if key != nil {
					t.Errorf("Ensure returned key %x alongside an error", key)
				}
				// A bad key is reported, never replaced: replacing it would
				// roll every workload.
				if got := stored(t, c).Data; !bytes.Equal(got[DataKey], tc.secret.Data[DataKey]) || len(got) != len(tc.secret.Data) {
					t.Errorf("Ensure changed the stored secret to %v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Ensure: %v", err)
			}
			if !bytes.Equal(key, tc.want) {
				t.Errorf("Ensure = %q, want %q", key, tc.want)
			}
		})
	}
}

func TestEnsureLosesCreateRace(t *testing.T) {
	winner := []byte("the-other-replica-won-this-race!")
	var creates int
	c := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			creates++
			// Another replica stores its key between our Get and Create.
			if err := c.Create(ctx, keySecret(winner), opts...); err != nil {
				return err
			}
			return c.Create(ctx, obj, opts...)
		},
	})
	key, err := Ensure(context.Background(), c, ref)
	if err != nil {
		t.Fatalf("Ensure: %v", err)
	}
	if creates != 1 {
		t.Errorf("Create called %d times, want 1", creates)
	}
	if !bytes.Equal(key, winner) {
		t.Errorf("Ensure = %q, want the winner's key %q", key, winner)
	}
	if got := stored(t, c).Data[DataKey]; !bytes.Equal(got, winner) {
		t.Errorf("stored key = %q, want the winner's %q", got, winner)
	}
}

func TestEnsureErrors(t *testing.T) {
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, ref.Name, errors.New("rbac"))
	tests := map[string]struct {
		funcs         interceptor.Funcs
		wantErr       string
		wantForbidden bool
	}{
		"get fails": {
			funcs: interceptor.Funcs{
				Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
					return forbidden
				},
			},
			wantErr:       "reading hmac key secret confighash-system/confighash-hmac-key: ",
			wantForbidden: true,
		},
		"create fails": {
			funcs: interceptor.Funcs{
				Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error {
					return forbidden
				},
			},
			wantErr:       "confighash-system/confighash-hmac-key: ",
			wantForbidden: true,
		},
		"create races and the re-read fails": {
			funcs: interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					return apierrors.NewAlreadyExists(schema.GroupResource{Resource: "secrets"}, obj.GetName())
				},
			},
			// The fake holds no secret, so the re-read after AlreadyExists
			// finds nothing.
			wantErr: "not found",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := interceptor.NewClient(fake.NewClientBuilder().Build(), tc.funcs)
			key, err := Ensure(context.Background(), c, ref)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Ensure error = %v, want one containing %q", err, tc.wantErr)
			}
			if key != nil {
				t.Errorf("Ensure returned key %x alongside an error", key)
			}
			if apierrors.IsForbidden(err) != tc.wantForbidden {
				t.Errorf("IsForbidden(%v) = %v, want %v: the API status must be wrapped", err, !tc.wantForbidden, tc.wantForbidden)
			}
		})
	}
}
