package pinning

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/confighash/confighash/hasher"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

func sourceCM() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{
			Name: "app", Namespace: "team",
			Labels:      map[string]string{"app": "web", "app.kubernetes.io/instance": "argocd-app"},
			Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"},
		},
		Data:       map[string]string{"a": "1", "b": "2", "c": "3"},
		BinaryData: map[string][]byte{"bin": {0, 1}},
	}
}

func whole() hasher.Reference {
	return hasher.Reference{AllKeys: true}
}

func keys(k ...string) hasher.Reference {
	return hasher.Reference{Keys: k}
}

func TestConfigMapSnapshotHoldsWhatIsReadAndNothingOfTheSourcesMetadata(t *testing.T) {
	cases := []struct {
		name     string
		ref      hasher.Reference
		data     []string
		withBins bool
	}{
		{"whole by a volume", whole(), []string{"a", "b", "c"}, true},
		{"whole by env", hasher.Reference{AllKeys: true, EnvOnly: true}, []string{"a", "b", "c"}, false},
		{"two keys by items", keys("a", "c"), []string{"a", "c"}, false},
		{"a binary key by items", keys("a", "bin"), []string{"a"}, true},
		{"a key the source lacks", keys("a", "zz"), []string{"a"}, false},
	}
	for _, c := range cases {
		snap := ConfigMapSnapshot(testKey, sourceCM(), c.ref)
		if got := strings.Join(sortedKeys(snap.Data), ","); got != strings.Join(c.data, ",") {
			t.Errorf("%s: data keys %q, want %q", c.name, got, strings.Join(c.data, ","))
		}
		if (len(snap.BinaryData) > 0) != c.withBins {
			t.Errorf("%s: binaryData %v, want present=%v", c.name, snap.BinaryData, c.withBins)
		}
		if snap.Immutable == nil || !*snap.Immutable {
			t.Errorf("%s: not immutable", c.name)
		}
		if len(snap.Labels) != 2 || snap.Labels[SnapshotLabel] != "true" || snap.Labels[managedByLabel] != managedBy {
			t.Errorf("%s: labels %v: want only the snapshot's own", c.name, snap.Labels)
		}
		if len(snap.Annotations) != 1 || snap.Annotations[SnapshotOfAnnotation] != "configmap/app" {
			t.Errorf("%s: annotations %v: want only the source's name", c.name, snap.Annotations)
		}
		if snap.Namespace != "team" || len(snap.OwnerReferences) != 0 {
			t.Errorf("%s: namespace %q, owners %v", c.name, snap.Namespace, snap.OwnerReferences)
		}
		if src, err := VerifyConfigMap(testKey, snap); err != nil || src != (hasher.Source{Kind: hasher.ConfigMap, Name: "app"}) {
			t.Errorf("%s: VerifyConfigMap = %v, %v", c.name, src, err)
		}
		// A caller with only digests (the source cache) names it the same.
		src := hasher.Source{Kind: hasher.ConfigMap, Name: "app"}
		if want := Name(testKey, "team", src, Select(c.ref, hasher.ConfigMapContent(sourceCM()))); snap.Name != want {
			t.Errorf("%s: name %q, from digests %q", c.name, snap.Name, want)
		}
	}
}

func TestSecretSnapshotIsAnOpaqueSecret(t *testing.T) {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "team", Labels: map[string]string{"app": "db"}},
		Data:       map[string][]byte{"password": []byte("p"), "user": []byte("u")},
	}
	snap := SecretSnapshot(testKey, s, keys("password"))
	if snap.Type != corev1.SecretTypeOpaque || len(snap.Data) != 1 || string(snap.Data["password"]) != "p" {
		t.Fatalf("snapshot %+v", snap)
	}
	if snap.Labels["app"] != "" || snap.Annotations[SnapshotOfAnnotation] != "secret/db" {
		t.Errorf("metadata %v %v", snap.Labels, snap.Annotations)
	}
	if _, err := VerifySecret(testKey, snap); err != nil {
		t.Errorf("VerifySecret: %v", err)
	}
	if !strings.HasPrefix(snap.Name, "db-pin-") || len(snap.Name) != len("db-pin-")+digestHexLen {
		t.Errorf("name %q", snap.Name)
	}
}

func TestNameChangesWithEveryInput(t *testing.T) {
	src := hasher.Source{Kind: hasher.ConfigMap, Name: "app"}
	base := hasher.Content{Data: map[string]hasher.Digest{"a": hasher.DigestOf([]byte("1"))}}
	ref := Name(testKey, "team", src, base)
	variants := map[string]string{
		"other key":       Name([]byte("another key, thirty-two bytes..."), "team", src, base),
		"other namespace": Name(testKey, "team2", src, base),
		"other kind":      Name(testKey, "team", hasher.Source{Kind: hasher.Secret, Name: "app"}, base),
		"other value":     Name(testKey, "team", src, hasher.Content{Data: map[string]hasher.Digest{"a": hasher.DigestOf([]byte("2"))}}),
		"other key name":  Name(testKey, "team", src, hasher.Content{Data: map[string]hasher.Digest{"b": hasher.DigestOf([]byte("1"))}}),
		"binary field":    Name(testKey, "team", src, hasher.Content{BinaryData: map[string]hasher.Digest{"a": hasher.DigestOf([]byte("1"))}}),
		"one more key":    Name(testKey, "team", src, hasher.Content{Data: map[string]hasher.Digest{"a": hasher.DigestOf([]byte("1")), "b": hasher.DigestOf(nil)}}),
		"no keys":         Name(testKey, "team", src, hasher.Content{}),
	}
	for what, got := range variants {
		if got == ref {
			t.Errorf("%s: same name %q", what, got)
		}
	}
	// The namespace/name split is length-prefixed: "ab"+"c" is not "a"+"bc".
	if Name(testKey, "ab", hasher.Source{Kind: hasher.ConfigMap, Name: "c"}, base) ==
		Name(testKey, "a", hasher.Source{Kind: hasher.ConfigMap, Name: "bc"}, base) {
		t.Error("namespace and name run together")
	}
}

func TestNamesAreValidObjectNames(t *testing.T) {
	long := strings.Repeat("a", 200) + "." + strings.Repeat("b", 52) // 253
	for _, source := range []string{"a", "app.config", long, strings.Repeat("x", 227) + "-y", strings.Repeat("x", 227) + ".y", strings.Repeat("x", 228) + "-"} {
		n := Name(testKey, "ns", hasher.Source{Kind: hasher.ConfigMap, Name: source}, hasher.Content{})
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			t.Errorf("source %q gives %q: %v", source, n, errs)
		}
	}
}

func TestVerifyRefusesWhatConfighashDidNotMake(t *testing.T) {
	good := ConfigMapSnapshot(testKey, sourceCM(), whole())
	cases := map[string]struct {
		edit func(*corev1.ConfigMap)
		want error
	}{
		"look-alike content": {func(cm *corev1.ConfigMap) { cm.Data["a"] = "evil" }, ErrContentMismatch},
		"extra key":          {func(cm *corev1.ConfigMap) { cm.Data["x"] = "1" }, ErrContentMismatch},
		"other namespace":    {func(cm *corev1.ConfigMap) { cm.Namespace = "elsewhere" }, ErrContentMismatch},
		"other source":       {func(cm *corev1.ConfigMap) { cm.Annotations[SnapshotOfAnnotation] = "configmap/other" }, ErrContentMismatch},
		"mutable":            {func(cm *corev1.ConfigMap) { cm.Immutable = nil }, ErrNotSnapshot},
		"not labelled":       {func(cm *corev1.ConfigMap) { delete(cm.Labels, SnapshotLabel) }, ErrNotSnapshot},
		"a secret's source":  {func(cm *corev1.ConfigMap) { cm.Annotations[SnapshotOfAnnotation] = "secret/app" }, ErrNotSnapshot},
		"garbage source":     {func(cm *corev1.ConfigMap) { cm.Annotations[SnapshotOfAnnotation] = "configmap/" }, ErrNotSnapshot},
	}
	for name, c := range cases {
		cm := good.DeepCopy()
		c.edit(cm)
		if _, err := VerifyConfigMap(testKey, cm); !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", name, err, c.want)
		}
	}
	if _, err := VerifyConfigMap([]byte("another key, thirty-two bytes..."), good); !errors.Is(err, ErrContentMismatch) {
		t.Errorf("under another key: %v", err)
	}
	s := SecretSnapshot(testKey, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "team"}, Data: map[string][]byte{"k": []byte("v")}}, whole())
	s.Type = corev1.SecretTypeTLS
	if _, err := VerifySecret(testKey, s); !errors.Is(err, ErrNotSnapshot) {
		t.Errorf("typed secret: %v", err)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
