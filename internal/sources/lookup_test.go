package sources

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/hasher"
)

func cm(name, namespace string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
			Annotations: map[string]string{lastApplied: "{}"}},
		Data: data,
	}
}

func secret(name, namespace string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

func deleting[T client.Object](obj T) T {
	now := metav1.Now()
	obj.SetDeletionTimestamp(&now)
	// The fake client only keeps an object with a deletionTimestamp when a
	// finalizer holds it.
	obj.SetFinalizers([]string{"example.com/hold"})
	return obj
}

// mustSlim is Slim of obj, which must succeed and keep obj's type.
func mustSlim[T client.Object](t *testing.T, obj T) T {
	t.Helper()
	out, err := Slim(obj)
	if err != nil {
		t.Fatal(err)
	}
	slim, ok := out.(T)
	if !ok {
		t.Fatalf("Slim returned %T, want %T", out, obj)
	}
	return slim
}

// withFinalizer re-adds the finalizer Slim dropped, so the fake client
// accepts a slimmed object that is being deleted.
func withFinalizer[T client.Object](obj T) T {
	obj.SetFinalizers([]string{"example.com/hold"})
	return obj
}

var errBoom = apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, "x", errors.New("boom"))

func failingGets(t *testing.T) client.WithWatch {
	t.Helper()
	return interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return errBoom
		},
	})
}

// panicsOnGet is a Live reader that must not be consulted.
type panicsOnGet struct{ client.Reader }

func (panicsOnGet) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	panic("live reader consulted on a cache hit or a cache error")
}

func TestReaderLookup(t *testing.T) {
	appCM := cm("app", "ns", map[string]string{"a": "1", "b": "2"})
	dbSecret := secret("db", "ns", map[string][]byte{"password": []byte("hunter2")})
	liveCM := cm("app", "ns", map[string]string{"a": "live"})
	liveSecret := secret("db", "ns", map[string][]byte{"password": []byte("live-pass")})

	tests := map[string]struct {
		cache     client.Reader
		live      client.Reader // nil: no live fallback
		namespace string
		src       hasher.Source
		want      hasher.Content
		wantFound bool
		wantErr   string
	}{
		"configmap hit in cache": {
			cache:     fake.NewClientBuilder().WithObjects(mustSlim(t, appCM.DeepCopy())).Build(),
			live:      panicsOnGet{},
			namespace: "ns",
			src:       hasher.Source{Kind: hasher.ConfigMap, Name: "app"},
			want:      hasher.ConfigMapContent(appCM),
			wantFound: true,
		},
		"secret hit in cache": {
			cache:     fake.NewClientBuilder().WithObjects(mustSlim(t, dbSecret.DeepCopy())).Build(),
			live:      panicsOnGet{},
			namespace: "ns",
			src:       hasher.Source{Kind: hasher.Secret, Name: "db"},
			want:      hasher.SecretContent(dbSecret),
			wantFound: true,
		},
		"cache hit wins over live": {
			cache:     fake.NewClientBuilder().WithObjects(mustSlim(t, appCM.DeepCopy())).Build(),
			live:      fake.NewClientBuilder().WithObjects(liveCM.DeepCopy()).Build(),
			namespace: "ns",
			src:       hasher.Source{Kind: hasher.ConfigMap, Name: "app"},
			want:      hasher.ConfigMapContent(appCM),
			wantFound: true,
		},
		"configmap missed in cache, found live": {
			cache:     fake.NewClientBuilder().Build(),
			live:      fake.NewClientBuilder().WithObjects(liveCM.DeepCopy()).Build(),
			namespace: "ns",
			src:       hasher.Source{Kind: hasher.ConfigMap, Name: "app"},
			want:      hasher.ConfigMapContent(liveCM),
			wantFound: true,
		},
		"secret missed in cache, found live": {
			cache:     fake.NewClientBuilder().Build(),
			live:      fake.NewClientBuilder().WithObjects(liveSecret.DeepCopy()).Build(),
			namespace: "ns",
			src:       hasher.Source{Kind: hasher.Secret, Name: "db"},
			want:      hasher.SecretContent(liveSecret),
			wantFound: true,
		},
		"missed in cache, no live reader": {
			cache:     fake.NewClientBuilder().Build(),
			namespace: "ns",
			src:       hasher.Source{Kind: hasher.ConfigMap, Name: "app"},
		},
		"missing everywhere": {
			cache:     fake.NewClientBuilder().Build(),
			live:      fake.NewClientBuilder().Build(),
			namespace: "ns",
			src:       hasher.Source{Kind: hasher.Secret, Name: "db"},
		},
		"other namespace only": {
			cache:     fake.NewClientBuilder().WithObjects(mustSlim(t, cm("app", "elsewhere", map[string]string{"a": "1"}))).Build(),
			live:      fake.NewClientBuilder().WithObjects(cm("app", "elsewhere", map[string]string{"a": "1"})).Build(),
			namespace: "ns",
			src:       hasher.Source{Kind: hasher.ConfigMap, Name: "app"},
		},
		"same name, other kind": {
			cache:     fake.NewClientBuilder().WithObjects(mustSlim(t, cm("db", "ns", map[string]string{"a": "1"}))).Build(),
			live:      fake.NewClientBuilder().WithObjects(cm("db", "ns", map[string]string{"a": "1"})).Build(),
			namespace: "ns",
			src:       hasher.Source{Kind: hasher.Secret, Name: "db"},
		},
		"being deleted in cache": {
			cache:     fake.NewClientBuilder().WithObjects(withFinalizer(mustSlim(t, deleting(appCM.DeepCopy())))).Build(),
			live:      panicsOnGet{},
			namespace: "ns",
			src:       hasher.Source{Kind: hasher.ConfigMap, Name: "app"},
		},
		"being deleted live": {
			cache:     fake.NewClientBuilder().Build(),
			live:      fake.NewClientBuilder().WithObjects(deleting(liveSecret.DeepCopy())).Build(),
			namespace: "ns",
			src:       hasher.Source{Kind: hasher.Secret, Name: "db"},
		},
		"cache error is returned, live not consulted": {
			cache:     failingGets(t),
			live:      panicsOnGet{},
			namespace: "ns",
			src:       hasher.Source{Kind: hasher.ConfigMap, Name: "app"},
			wantErr:   "reading configmap/app in ns: ",
		},
		"live error is returned": {
			cache:     fake.NewClientBuilder().Build(),
			live:      failingGets(t),
			namespace: "ns",
			src:       hasher.Source{Kind: hasher.Secret, Name: "db"},
			wantErr:   "reading secret/db in ns: ",
		},
		"unslimmed object in cache is an error": {
			cache:     fake.NewClientBuilder().WithObjects(appCM.DeepCopy()).Build(),
			namespace: "ns",
			src:       hasher.Source{Kind: hasher.ConfigMap, Name: "app"},
			wantErr:   "was not slimmed",
		},
		"unknown kind": {
			cache:     fake.NewClientBuilder().Build(),
			namespace: "ns",
			src:       hasher.Source{Kind: "Pod", Name: "app"},
			wantErr:   `unknown source kind "Pod"`,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			r := Reader{Cache: tc.cache}
			if tc.live != nil {
				r.Live = tc.live
			}
			got, found, err := r.Lookup(context.Background(), tc.namespace)(tc.src)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Lookup(%v) error = %v, want one containing %q", tc.src, err, tc.wantErr)
				}
				if found {
					t.Errorf("Lookup(%v) found = true alongside an error", tc.src)
				}
				return
			}
			if err != nil {
				t.Fatalf("Lookup(%v): %v", tc.src, err)
			}
			if found != tc.wantFound {
				t.Fatalf("Lookup(%v) found = %v, want %v", tc.src, found, tc.wantFound)
			}
			if !found {
				if len(got.Data) != 0 || len(got.BinaryData) != 0 {
					t.Errorf("Lookup(%v) not found but returned content %v", tc.src, got)
				}
				return
			}
			if !sameContent(got, tc.want) {
				t.Errorf("Lookup(%v) = %v, want %v", tc.src, got, tc.want)
			}
		})
	}
}

// The live error keeps its API status, so callers can tell it apart.
func TestReaderLookupWrapsErrors(t *testing.T) {
	r := Reader{Cache: fake.NewClientBuilder().Build(), Live: failingGets(t)}
	_, _, err := r.Lookup(context.Background(), "ns")(hasher.Source{Kind: hasher.ConfigMap, Name: "app"})
	if !apierrors.IsForbidden(err) {
		t.Errorf("error %v does not wrap the Forbidden status", err)
	}
}
