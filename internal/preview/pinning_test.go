package preview

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/pinning"
	"github.com/confighash/confighash/internal/workload"
)

// TestComputePinning: in a namespace that pins, a reader that pins is
// marked pinned (its pods keep the old content until its re-stamp), one
// that opts out is not, and a source that is never pinned says why.
func TestComputePinning(t *testing.T) {
	live := cmState(t, map[string]string{"a": "1"}, nil)
	next := cmState(t, map[string]string{"a": "2"}, nil)
	f := facts(t, &live, next, nil,
		deployment("a-web", nil, envKey("a")),
		deployment("b-off", map[string]string{pinning.PinAnnotation: pinning.PinOff}, envKey("a")))
	f.NamespacePins, f.SourcePin = true, pinning.Pinned
	rep := computed(t, f, 8)
	pinned := map[string]bool{}
	for _, r := range rep.Rolling {
		pinned[r.Ref] = r.Pinned
	}
	if !pinned["deployment/a-web"] || pinned["deployment/b-off"] || len(pinned) != 2 {
		t.Errorf("pinned %v, want a-web only", pinned)
	}
	var out strings.Builder
	if err := WriteTable(&out, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "changed: a; pinned") || !strings.Contains(out.String(), "the namespace pins: a reader marked pinned") {
		t.Errorf("the table does not say which readers pin:\n%s", out.String())
	}

	f.SourcePin = pinning.SkipNever
	rep = computed(t, f, 8)
	for _, r := range rep.Rolling {
		if r.Pinned {
			t.Errorf("%s is pinned, but the source is not", r.Ref)
		}
	}
	if !strings.Contains(strings.Join(rep.Notes, "\n"), "is not pinned (pin-never)") {
		t.Errorf("notes %q do not say the source is not pinned", rep.Notes)
	}

	f.NamespacePins = false
	rep = computed(t, f, 8)
	for _, n := range rep.Notes {
		if strings.Contains(n, "pin") {
			t.Errorf("a namespace that does not pin has the note %q", n)
		}
	}
}

// TestGatherPinning reads the namespace's pinning label and the policy's
// answer for the input (a TLS Secret is never pinned).
func TestGatherPinning(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{contract.InjectionLabel: contract.InjectionEnabled, pinning.NamespaceLabel: pinning.NamespaceEnabled}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: labels}},
		deployment("web", nil, envFrom("app")),
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	o := Options{Kinds: workload.Kinds(), Policy: injection.New("confighash-system")}
	for input, want := range map[string]pinning.Skip{
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {a: x}\n":                                               pinning.Pinned,
		"apiVersion: v1\nkind: Secret\nmetadata: {name: tls}\ntype: kubernetes.io/tls\ndata: {tls.crt: eA==, tls.key: eA==}\n": pinning.SkipSecretType,
	} {
		in, err := Parse(strings.NewReader(input))
		if err != nil {
			t.Fatal(err)
		}
		f, err := Gather(t.Context(), c, in, "shop", o)
		if err != nil {
			t.Fatal(err)
		}
		if !f.NamespacePins || f.SourcePin != want {
			t.Errorf("%s: pins %v, source %q; want true, %q", in.Source, f.NamespacePins, f.SourcePin, want)
		}
	}
}
