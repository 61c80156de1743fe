package webhook

import (
	"context"
	"sync/atomic"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/sources"
)

// slimCache is an informer cache holding ConfigMap cfg in ns with data.
func slimCache(t *testing.T, data map[string]string) client.Reader {
	t.Helper()
	s, err := sources.Slim(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}, Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithObjects(s.(client.Object)).Build()
}

// sumOf is the stamp of deployment()'s template when cfg holds data.
func sumOf(t *testing.T, data map[string]string) string {
	t.Helper()
	d := deployment()
	refs, err := hasher.References(&d.Spec.Template.Spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := hasher.Checksum(testKey, "ns", refs, sources.Reader{Cache: slimCache(t, data)}.Lookup(context.Background(), "ns"))
	if err != nil {
		t.Fatal(err)
	}
	return res.Checksum
}

// TestTemplateChangeReadsLive: a write that changes the template of a kind
// the hook re-stamps (a metadata-only change too: kubectl rollout restart,
// Helm's checksum/config annotation) is stamped from a live read, not from
// a cache that has not yet seen the ConfigMap written a moment before.
// Before, the cache answered, so the stamp recorded the old content: the
// hook's correction was a second rollout, or, when the hook did not look
// again, a later revert of the config rolled nothing. Writes that roll
// nothing, dry-runs and Pods keep reading the cache.
func TestTemplateChangeReadsLive(t *testing.T) {
	oldData, newData := map[string]string{"k": "old"}, map[string]string{"k": "new"}
	oldSum, newSum := sumOf(t, oldData), sumOf(t, newData)
	if oldSum == newSum {
		t.Fatal("the two contents give one stamp; the test shows nothing")
	}
	restarted := func(d *appsv1.Deployment) {
		d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] = "2026-12-01T00:00:00Z"
	}
	stamped := deployment(withStamp(oldSum))
	dryRunReq := request(admissionv1.Update, deployment(withStamp(oldSum), restarted), stamped)
	dryRunReq.DryRun = ptr.To(true)
	pod := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: deployment().Spec.Template.Spec}

	tests := []struct {
		name     string
		req      admission.Request
		want     string
		liveGets int64
	}{
		{"rollout restart", request(admissionv1.Update, deployment(withStamp(oldSum), restarted), stamped), newSum, 1},
		{"image change", request(admissionv1.Update, deployment(withStamp(oldSum), withImage("busybox:2")), stamped), newSum, 1},
		{"create", request(admissionv1.Create, deployment(), nil), newSum, 1},
		{"re-apply, template unchanged", request(admissionv1.Update, deployment(withStamp(oldSum)), stamped), oldSum, 0},
		{"dry-run", dryRunReq, oldSum, 0},
		{"bare pod", request(admissionv1.Create, pod, nil), oldSum, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var gets atomic.Int64
			live := interceptor.NewClient(fake.NewClientBuilder().WithObjects(
				&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}, Data: newData}).Build(),
				interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					gets.Add(1)
					return c.Get(ctx, key, obj, opts...)
				}})
			h := newHandler(t, nil)
			h.Sources = sources.Reader{Cache: slimCache(t, oldData), Live: live}
			resp := h.Handle(context.Background(), tc.req)
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result)
			}
			got := answeredStamp(t, tc.req, resp)
			if got != tc.want {
				t.Errorf("stamp %q, want %q (new content %q, old %q)", got, tc.want, newSum, oldSum)
			}
			if n := gets.Load(); n != tc.liveGets {
				t.Errorf("%d live GETs, want %d", n, tc.liveGets)
			}
		})
	}
}

// prefetching records what the handler asks to prefetch, and under which
// context.
type prefetching struct {
	Lookuper
	got    []hasher.Source
	prefer bool
}

func (p *prefetching) Prefetch(ctx context.Context, _ string, refs []hasher.Reference) {
	p.got = nil
	for _, ref := range refs {
		p.got = append(p.got, ref.Source)
	}
	// Only a PreferLive context makes a lookup read live.
	var gets atomic.Int64
	r := sources.Reader{Cache: fake.NewClientBuilder().Build(), Live: countingLive(&gets)}
	_, _, _ = r.Lookup(ctx, "ns")(hasher.Source{Kind: hasher.ConfigMap, Name: "probe"})
	p.prefer = gets.Load() > 0
}

// TestStampPrefetchesTheTemplatesSources: before a new template's checksum,
// the handler asks its sources to read every source the template names at
// once (sources.Reader.Prefetch), under the same fresh-read context as the
// checksum.
func TestStampPrefetchesTheTemplatesSources(t *testing.T) {
	p := &prefetching{Lookuper: fakeSources{}}
	h := newHandler(t, nil)
	h.Sources = p
	d := deployment()
	if resp := h.Handle(context.Background(), request(admissionv1.Create, d, nil)); !resp.Allowed {
		t.Fatal("denied")
	}
	refs, err := hasher.References(&d.Spec.Template.Spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.got) != len(refs) || len(refs) == 0 {
		t.Fatalf("prefetched %v, want the template's %d sources", p.got, len(refs))
	}
	for i, ref := range refs {
		if p.got[i] != ref.Source {
			t.Errorf("prefetched %v, want %v", p.got[i], ref.Source)
		}
	}
	if !p.prefer {
		t.Error("prefetched outside the fresh-read context")
	}
}
