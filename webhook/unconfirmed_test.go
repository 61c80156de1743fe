package webhook

import (
	"context"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/sources"
)

// TestCreateAfterARememberedMissIsStampedLive: a Deployment admitted within
// the TTL of a GET that found its ConfigMap missing, while the cache holds
// the ConfigMap as a placeholder (its namespace labelled a moment ago, the
// fill not done), is stamped with the ConfigMap's content, read live: the
// miss was remembered from before this admission began, so it is not
// taken. Once it was stamped as absent, and the hook's re-check re-stamped
// it with the content 3 s later: a second ReplicaSet with nothing changed;
// then it was left unstamped, and the hook's first stamp was that second
// ReplicaSet.
func TestCreateAfterARememberedMissIsStampedLive(t *testing.T) {
	apiserver := fake.NewClientBuilder().Build()
	recent := sources.NewRecentReads(apiserver, sources.DefaultMissTTL, sources.DefaultRecentWeight, nil)
	misses := sources.NewMisses(sources.DefaultMissTTL, sources.DefaultMissEntries, nil)
	h := newHandler(t, nil)
	h.Namespaces = namespaces{"ns": injected}
	h.Sources = sources.Reader{Cache: fake.NewClientBuilder().Build(), Live: recent, Misses: misses}
	// An earlier admission looked for cfg before it existed.
	h.Handle(context.Background(), request(admissionv1.Create, deployment(), nil))

	cfg := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}, Data: map[string]string{"k": "v"}}
	if err := apiserver.Create(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	placeholder, err := sources.Slimmer{Serves: func(string) bool { return false }}.Slim(cfg.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	h.Sources = sources.Reader{Cache: sources.NewFills().Reader(fake.NewClientBuilder().WithObjects(placeholder.(*corev1.ConfigMap)).Build()),
		Live: recent, Misses: misses}
	req := request(admissionv1.Create, deployment(), nil)
	resp := h.Handle(context.Background(), req)
	want := stampOf(t, fakeSources{{Kind: hasher.ConfigMap, Name: "cfg"}: cfg.Data}, deployment())
	if got := answeredStamp(t, req, resp); got != want {
		t.Errorf("stamped %q, want %q from the ConfigMap read live", got, want)
	}
	if len(resp.Warnings) != 0 {
		t.Errorf("warnings %q, want none", resp.Warnings)
	}
}
