package sources

import (
	"testing"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
)

// TestSlimHoldsEachNamespaceOnce: two Secrets of one namespace, decoded
// apart (each name its own allocation), share one copy of the namespace's
// name and of their type once slimmed.
func TestSlimHoldsEachNamespaceOnce(t *testing.T) {
	a, err := Slim(smallSecret(0))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Slim(smallSecret(1))
	if err != nil {
		t.Fatal(err)
	}
	sa, sb := a.(*corev1.Secret), b.(*corev1.Secret)
	if sa.Namespace != sb.Namespace {
		t.Fatalf("fixture: namespaces %q and %q", sa.Namespace, sb.Namespace)
	}
	if unsafe.StringData(sa.Namespace) != unsafe.StringData(sb.Namespace) {
		t.Error("each slimmed Secret holds its own copy of its namespace's name")
	}
	if unsafe.StringData(string(sa.Type)) != unsafe.StringData(string(sb.Type)) {
		t.Error("each slimmed Secret holds its own copy of its type")
	}
}
