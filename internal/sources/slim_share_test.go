package sources

import (
	"reflect"
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/internal/contract"
)

// TestSlimmedSourcesShareTheirMark: the sources that keep no annotation of
// their own, held or placeholders, share one read-only annotations map per
// format, rather than a map of about 300 bytes each; one that keeps one
// has its own.
func TestSlimmedSourcesShareTheirMark(t *testing.T) {
	s := Slimmer{Serves: func(ns string) bool { return ns == "served" }}
	slim := func(ns, name string, annotations map[string]string) *corev1.Secret {
		t.Helper()
		out, err := s.Slim(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Annotations: annotations},
			Data: map[string][]byte{"k": []byte(name)}})
		if err != nil {
			t.Fatal(err)
		}
		return out.(*corev1.Secret)
	}
	same := func(a, b map[string]string) bool {
		return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
	}

	held1, held2 := slim("served", "a", map[string]string{"other": "x"}), slim("served", "b", nil)
	if !same(held1.Annotations, held2.Annotations) {
		t.Error("two held Secrets without annotations of their own hold a map each")
	}
	off1, off2 := slim("off", "a", nil), slim("off", "b", nil)
	if !same(off1.Annotations, off2.Annotations) {
		t.Error("two placeholders hold a map each")
	}
	if same(held1.Annotations, off1.Annotations) {
		t.Error("a held Secret and a placeholder share their mark")
	}
	ignored := slim("served", "c", map[string]string{contract.IgnoreAnnotation: contract.IgnoreTrue})
	if same(ignored.Annotations, held1.Annotations) || ignored.Annotations[contract.IgnoreAnnotation] != contract.IgnoreTrue {
		t.Errorf("an ignored Secret's annotations %v are the shared mark's", ignored.Annotations)
	}
	if placeholder(off1) != NotServed || placeholder(held1) != "" {
		t.Errorf("placeholder(): %q and %q, want %q and none", placeholder(off1), placeholder(held1), NotServed)
	}
}

// TestSlimmedSourceKeepsNoDecodedString: the strings a slimmed copy keeps
// are its own, not the decoded object's, so that it pins none of the
// decoder's garbage in the heap (see keep).
func TestSlimmedSourceKeepsNoDecodedString(t *testing.T) {
	in := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "db", UID: "u-1", ResourceVersion: "42"},
		Type: "example.com/custom", Data: map[string][]byte{"password": []byte("p")}}
	got := mustSlim(t, in)
	aliases := func(a, b string) bool { return len(a) > 0 && unsafe.StringData(a) == unsafe.StringData(b) }
	for _, p := range []struct{ name, got, in string }{
		{"name", got.Name, in.Name}, {"namespace", got.Namespace, in.Namespace},
		{"uid", string(got.UID), string(in.UID)}, {"resourceVersion", got.ResourceVersion, in.ResourceVersion},
		{"type", string(got.Type), string(in.Type)},
	} {
		if p.got != p.in {
			t.Errorf("%s %q, want %q", p.name, p.got, p.in)
		}
		if aliases(p.got, p.in) {
			t.Errorf("%s is the decoded object's string", p.name)
		}
	}
	for k := range got.Data {
		for ik := range in.Data {
			if aliases(k, ik) {
				t.Errorf("key %q is the decoded object's string", k)
			}
		}
	}
}
