package sources

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/confighash/confighash/hasher"
)

const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

var (
	created = metav1.NewTime(metav1.Now().Rfc3339Copy().Time)
	deleted = metav1.NewTime(created.Add(time.Hour))
)

// fullMeta is metadata with everything slimMeta should keep and everything
// it should drop.
func fullMeta(name string, secretish string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:              name,
		Namespace:         "ns",
		UID:               types.UID("uid-" + name),
		ResourceVersion:   "42",
		Generation:        7,
		CreationTimestamp: created,
		DeletionTimestamp: &deleted,
		Labels:            map[string]string{"app": "label-" + secretish},
		Annotations: map[string]string{
			lastApplied: `{"data":{"password":"` + secretish + `"}}`,
			"other":     "annotation-" + secretish,
		},
		Finalizers:      []string{"example.com/keep"},
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "owner", UID: "owner-uid"}},
		ManagedFields: []metav1.ManagedFieldsEntry{{
			Manager:    "kubectl",
			Operation:  metav1.ManagedFieldsOperationApply,
			APIVersion: "v1",
			FieldsType: "FieldsV1",
			FieldsV1:   metav1.NewFieldsV1(`{"f:data":{"f:password":{}},"f:x":"` + secretish + `"}`),
		}},
	}
}

// checkSlimMeta verifies identity and lifecycle were kept and everything
// else dropped. Slim may add a marker annotation of its own, but none of the
// object's annotations may survive.
func checkSlimMeta(t *testing.T, got, orig metav1.ObjectMeta) {
	t.Helper()
	if got.Name != orig.Name || got.Namespace != orig.Namespace || got.UID != orig.UID ||
		got.ResourceVersion != orig.ResourceVersion || got.Generation != orig.Generation ||
		!got.CreationTimestamp.Equal(&orig.CreationTimestamp) || !got.DeletionTimestamp.Equal(orig.DeletionTimestamp) {
		t.Errorf("identity not kept:\n got %+v\nfrom %+v", got, orig)
	}
	if got.Labels != nil || got.ManagedFields != nil || got.Finalizers != nil || got.OwnerReferences != nil {
		t.Errorf("slimmed metadata keeps more than identity: labels=%v managedFields=%v finalizers=%v owners=%v",
			got.Labels, got.ManagedFields, got.Finalizers, got.OwnerReferences)
	}
	for k := range orig.Annotations {
		if _, ok := got.Annotations[k]; ok {
			t.Errorf("annotation %q survived Slim", k)
		}
	}
}

// checkNoValues fails when any of values appears, in clear or base64, in
// the JSON of obj.
func checkNoValues(t *testing.T, obj any, values ...string) {
	t.Helper()
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		for _, enc := range []string{v, base64.StdEncoding.EncodeToString([]byte(v))} {
			if bytes.Contains(raw, []byte(enc)) {
				t.Errorf("slimmed object still holds value %q (as %q): %s", v, enc, raw)
			}
		}
	}
}

// sameContent compares contents as the checksum sees them: a nil map and
// an empty one are alike.
func sameContent(a, b hasher.Content) bool {
	eq := func(x, y map[string]hasher.Digest) bool {
		if len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || w != v {
				return false
			}
		}
		return true
	}
	return eq(a.Data, b.Data) && eq(a.BinaryData, b.BinaryData)
}

func TestSlimConfigMap(t *testing.T) {
	tests := map[string]struct {
		cm     *corev1.ConfigMap
		values []string
	}{
		"data and binaryData": {
			cm: &corev1.ConfigMap{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: fullMeta("app", "hunter2-cm-secretish"),
				Data:       map[string]string{"app.yaml": "level: debug-unique-value", "empty": ""},
				BinaryData: map[string][]byte{"blob.bin": []byte("\x00\x01binary-unique-value")},
			},
			values: []string{"hunter2-cm-secretish", "level: debug-unique-value", "binary-unique-value"},
		},
		"data only": {
			cm: &corev1.ConfigMap{
				ObjectMeta: fullMeta("data-only", "data-only-secretish"),
				Data:       map[string]string{"k": "data-only-value"},
			},
			values: []string{"data-only-secretish", "data-only-value"},
		},
		"binaryData only": {
			cm: &corev1.ConfigMap{
				ObjectMeta: fullMeta("bin-only", "bin-only-secretish"),
				BinaryData: map[string][]byte{"k": []byte("bin-only-value")},
			},
			values: []string{"bin-only-secretish", "bin-only-value"},
		},
		"empty": {
			cm: &corev1.ConfigMap{ObjectMeta: fullMeta("empty", "empty-secretish")},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			orig := tc.cm.DeepCopy()
			slim := mustSlim(t, tc.cm)
			if slim == tc.cm {
				t.Fatal("Slim returned its input, want a new object")
			}
			if slim.TypeMeta != orig.TypeMeta {
				t.Errorf("TypeMeta = %+v, want %+v", slim.TypeMeta, orig.TypeMeta)
			}
			checkSlimMeta(t, slim.ObjectMeta, orig.ObjectMeta)
			checkNoValues(t, slim, tc.values...)
			if slim.Data != nil || len(slim.BinaryData) != len(orig.Data)+len(orig.BinaryData) {
				t.Errorf("keys not kept, all in binaryData: data %v binaryData %v", slim.Data, slim.BinaryData)
			}
			for k := range orig.Data {
				if len(slim.BinaryData[k]) != 32 {
					t.Errorf("digest of data[%q] has %d bytes, want 32", k, len(slim.BinaryData[k]))
				}
			}
			for k := range orig.BinaryData {
				if len(slim.BinaryData[binaryKey+k]) != 32 {
					t.Errorf("digest of binaryData[%q] has %d bytes, want 32", k, len(slim.BinaryData[binaryKey+k]))
				}
			}

			got, err := Content(slim)
			if err != nil {
				t.Fatalf("Content(Slim(cm)): %v", err)
			}
			if want := hasher.ConfigMapContent(orig); !sameContent(got, want) {
				t.Errorf("Content(Slim(cm)) = %v, want %v", got, want)
			}

			// Slim must not touch its input: the informer may still share it.
			if len(tc.cm.Data) != len(orig.Data) || tc.cm.Annotations[lastApplied] != orig.Annotations[lastApplied] {
				t.Errorf("Slim modified its input")
			}
			for k, v := range orig.Data {
				if tc.cm.Data[k] != v {
					t.Errorf("Slim modified input data[%q]: %q", k, tc.cm.Data[k])
				}
			}
			for k, v := range orig.BinaryData {
				if !bytes.Equal(tc.cm.BinaryData[k], v) {
					t.Errorf("Slim modified input binaryData[%q]", k)
				}
			}
		})
	}
}

func TestSlimSecret(t *testing.T) {
	tests := map[string]struct {
		s      *corev1.Secret
		values []string
	}{
		"opaque": {
			s: &corev1.Secret{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
				ObjectMeta: fullMeta("db", "hunter2-secret-annotation"),
				Type:       corev1.SecretTypeOpaque,
				Data:       map[string][]byte{"password": []byte("hunter2-secret-value"), "user": []byte("admin-unique-user")},
				StringData: map[string]string{"extra": "string-data-value"},
			},
			values: []string{"hunter2-secret-annotation", "hunter2-secret-value", "admin-unique-user", "string-data-value"},
		},
		"tls": {
			s: &corev1.Secret{
				ObjectMeta: fullMeta("tls", "tls-secretish"),
				Type:       corev1.SecretTypeTLS,
				Data:       map[string][]byte{"tls.crt": []byte("-----CERT tls-cert-value"), "tls.key": []byte("-----KEY tls-key-value")},
			},
			values: []string{"tls-secretish", "tls-cert-value", "tls-key-value"},
		},
		"empty": {
			s: &corev1.Secret{ObjectMeta: fullMeta("empty", "empty-secret-secretish")},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			orig := tc.s.DeepCopy()
			slim := mustSlim(t, tc.s)
			if slim.TypeMeta != orig.TypeMeta {
				t.Errorf("TypeMeta = %+v, want %+v", slim.TypeMeta, orig.TypeMeta)
			}
			if slim.Type != orig.Type {
				t.Errorf("Type = %q, want %q", slim.Type, orig.Type)
			}
			if slim.StringData != nil {
				t.Errorf("StringData kept: %v", slim.StringData)
			}
			checkSlimMeta(t, slim.ObjectMeta, orig.ObjectMeta)
			checkNoValues(t, slim, tc.values...)
			if len(slim.Data) != len(orig.Data) {
				t.Errorf("keys not kept: %v", slim.Data)
			}
			for k := range orig.Data {
				if d := hasher.DigestOf(orig.Data[k]); !bytes.Equal(slim.Data[k], d[:]) {
					t.Errorf("data[%q] = %x, want sha256 %x", k, slim.Data[k], d)
				}
			}
			got, err := Content(slim)
			if err != nil {
				t.Fatalf("Content(Slim(secret)): %v", err)
			}
			if want := hasher.SecretContent(orig); !sameContent(got, want) {
				t.Errorf("Content(Slim(secret)) = %v, want %v", got, want)
			}
			for k, v := range orig.Data {
				if !bytes.Equal(tc.s.Data[k], v) {
					t.Errorf("Slim modified input data[%q]", k)
				}
			}
		})
	}
}

// client-go never runs the transform on a DeletedFinalStateUnknown: the
// object in it comes from the store, so it was slimmed on the way in. Slim
// must hand such a tombstone back as it is.
func TestSlimTombstone(t *testing.T) {
	slimCM := mustSlim(t, &corev1.ConfigMap{ObjectMeta: fullMeta("gone", "tomb-cm-annotation"), Data: map[string]string{"k": "tomb-cm-value"}})
	slimSecret := mustSlim(t, &corev1.Secret{ObjectMeta: fullMeta("gone", "tomb-secret-annotation"), Data: map[string][]byte{"k": []byte("tomb-secret-value")}})
	tests := map[string]struct {
		inner  any
		values []string
	}{
		"slimmed configmap": {inner: slimCM, values: []string{"tomb-cm-annotation", "tomb-cm-value"}},
		"slimmed secret":    {inner: slimSecret, values: []string{"tomb-secret-annotation", "tomb-secret-value"}},
		"other object":      {inner: &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, err := Slim(cache.DeletedFinalStateUnknown{Key: "ns/gone", Obj: tc.inner})
			if err != nil {
				t.Fatal(err)
			}
			tomb, ok := out.(cache.DeletedFinalStateUnknown)
			if !ok {
				t.Fatalf("Slim(tombstone) returned %T, want cache.DeletedFinalStateUnknown", out)
			}
			if tomb.Key != "ns/gone" || tomb.Obj != tc.inner {
				t.Errorf("Slim(tombstone) = %+v, want it unchanged", tomb)
			}
			checkNoValues(t, tomb.Obj, tc.values...)
			if _, isPod := tc.inner.(*corev1.Pod); isPod {
				return
			}
			if _, err := Content(tomb.Obj); err != nil {
				t.Errorf("Content of the tombstone's object: %v", err)
			}
		})
	}
}

// The transform may see an object more than once; digesting digests would
// change every checksum.
func TestSlimIdempotent(t *testing.T) {
	tests := map[string]struct {
		obj  any
		want hasher.Content
	}{
		"configmap": {
			obj:  &corev1.ConfigMap{ObjectMeta: fullMeta("app", "x"), Data: map[string]string{"k": "v"}, BinaryData: map[string][]byte{"b": {1, 2}}},
			want: hasher.ConfigMapContent(&corev1.ConfigMap{Data: map[string]string{"k": "v"}, BinaryData: map[string][]byte{"b": {1, 2}}}),
		},
		"secret": {
			obj:  &corev1.Secret{ObjectMeta: fullMeta("db", "x"), Data: map[string][]byte{"p": []byte("hunter2")}},
			want: hasher.SecretContent(&corev1.Secret{Data: map[string][]byte{"p": []byte("hunter2")}}),
		},
		"empty secret": {
			obj: &corev1.Secret{ObjectMeta: fullMeta("empty", "x")},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			once, err := Slim(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			onceJSON, err := json.Marshal(once)
			if err != nil {
				t.Fatal(err)
			}
			twice, err := Slim(once)
			if err != nil {
				t.Fatal(err)
			}
			twiceJSON, err := json.Marshal(twice)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(onceJSON, twiceJSON) {
				t.Errorf("Slim(Slim(x)) differs from Slim(x):\n%s\n%s", twiceJSON, onceJSON)
			}
			got, err := Content(twice)
			if err != nil {
				t.Fatalf("Content(Slim(Slim(x))): %v", err)
			}
			if !sameContent(got, tc.want) {
				t.Errorf("Content(Slim(Slim(x))) = %v, want %v", got, tc.want)
			}
			// A deep copy, as a cache hands out, is still recognised.
			copied := twice.(interface{ DeepCopyObject() runtime.Object }).DeepCopyObject()
			if got, err := Content(copied); err != nil || !sameContent(got, tc.want) {
				t.Errorf("Content(deep copy) = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestSlimPassesOtherObjectsThrough(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Annotations: map[string]string{"a": "b"}}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"l": "v"}}}
	cmByValue := corev1.ConfigMap{Data: map[string]string{"k": "v"}}
	tests := map[string]struct {
		obj any
	}{
		"pod":                {obj: pod},
		"namespace":          {obj: ns},
		"nil":                {obj: nil},
		"configmap by value": {obj: cmByValue},
		"string":             {obj: "ns/name"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			out, err := Slim(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			switch want := tc.obj.(type) {
			case *corev1.Pod:
				if out != any(want) || want.Annotations["a"] != "b" {
					t.Errorf("Slim(pod) = %v, want the same, unmodified pod", out)
				}
			case *corev1.Namespace:
				if out != any(want) || want.Labels["l"] != "v" {
					t.Errorf("Slim(namespace) = %v, want the same, unmodified namespace", out)
				}
			case corev1.ConfigMap:
				got, ok := out.(corev1.ConfigMap)
				if !ok || got.Data["k"] != "v" {
					t.Errorf("Slim(ConfigMap value) = %v, want it passed through", out)
				}
			default:
				if out != tc.obj {
					t.Errorf("Slim(%v) = %v, want it passed through", tc.obj, out)
				}
			}
		})
	}
}

// corrupt slims obj and then breaks its digests with mutate, to reach the
// checks behind the slimmed marker.
func corrupt[T any](t *testing.T, obj T, mutate func(T)) T {
	t.Helper()
	out, err := Slim(obj)
	if err != nil {
		t.Fatal(err)
	}
	slim := out.(T)
	mutate(slim)
	return slim
}

func TestContentRejectsUnslimmed(t *testing.T) {
	digest := hasher.DigestOf([]byte("x"))
	meta := metav1.ObjectMeta{Name: "c", Namespace: "ns"}
	tests := map[string]struct {
		obj     any
		wantErr string
	}{
		"raw configmap": {
			obj:     &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"k": "hello world"}},
			wantErr: "was not slimmed",
		},
		"raw configmap whose value looks like a digest": {
			obj:     &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"k": hex.EncodeToString(digest[:])}},
			wantErr: "was not slimmed",
		},
		"raw secret whose value is 32 bytes": {
			obj:     &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{"k": digest[:]}},
			wantErr: "was not slimmed",
		},
		"raw empty configmap": {
			obj:     &corev1.ConfigMap{ObjectMeta: meta},
			wantErr: "was not slimmed",
		},
		"pod": {
			obj:     &corev1.Pod{},
			wantErr: "was not slimmed",
		},
		"nil": {
			obj:     nil,
			wantErr: "was not slimmed",
		},
		"slimmed configmap with a value in data": {
			obj: corrupt(t, &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"k": "v"}},
				func(c *corev1.ConfigMap) { c.Data = map[string]string{"k": "hello world"} }),
			wantErr: `configmap ns/c: data holds values, not digests`,
		},
		"slimmed configmap with a short digest": {
			obj: corrupt(t, &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"k": "v"}},
				func(c *corev1.ConfigMap) { c.BinaryData["k"] = []byte("ab") }),
			wantErr: `configmap ns/c key "k": not a slimmed digest: 2 bytes`,
		},
		"slimmed configmap with a short binaryData digest": {
			obj: corrupt(t, &corev1.ConfigMap{ObjectMeta: meta, BinaryData: map[string][]byte{"b": {1}}},
				func(c *corev1.ConfigMap) { c.BinaryData[binaryKey+"b"] = []byte("raw") }),
			wantErr: `configmap ns/c key "!b": not a slimmed digest: 3 bytes`,
		},
		"slimmed secret with a raw value": {
			obj: corrupt(t, &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{"password": {1}}},
				func(s *corev1.Secret) { s.Data["password"] = []byte("hunter2") }),
			wantErr: `secret ns/c: key "password": not a slimmed digest: 7 bytes`,
		},
		"slimmed secret with a value one byte too long": {
			obj: corrupt(t, &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{"k": {1}}},
				func(s *corev1.Secret) { s.Data["k"] = append(digest[:], 0) }),
			wantErr: "33 bytes",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c, err := Content(tc.obj)
			if err == nil {
				t.Fatalf("Content(%T) = %v, nil; want an error", tc.obj, c)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
			if c.Data != nil || c.BinaryData != nil {
				t.Errorf("Content returned data alongside an error: %v", c)
			}
		})
	}
}
