package webhook

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/workload"
)

// countingLive is an empty apiserver that counts the GETs it answers.
func countingLive(gets *atomic.Int64) client.Reader {
	return interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			gets.Add(1)
			return c.Get(ctx, key, obj, opts...)
		},
	})
}

// readsMissing is a Deployment reading n ConfigMaps that exist nowhere, the
// most live confirmations one admission could ask for.
func readsMissing(prefix string, n int) *appsv1.Deployment {
	return deployment(func(d *appsv1.Deployment) {
		c := &d.Spec.Template.Spec.Containers[0]
		c.EnvFrom = nil
		for i := range n {
			c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{ConfigMapRef: &corev1.ConfigMapEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: fmt.Sprintf("%s-%d", prefix, i)}}})
		}
	})
}

// TestLiveGetsPerAdmission counts the live GETs admissions cause through
// the real sources.Reader. Before the bound, one CREATE naming 256 missing
// sources made 256 GETs, and so did every repeat and every dry-run. A new
// template reads fresh (PreferLive), so a repeat confirms its misses again:
// one may have been created since the last GET.
func TestLiveGetsPerAdmission(t *testing.T) {
	create := request(admissionv1.Create, readsMissing("missing", workload.MaxSources), nil)
	dryRun := request(admissionv1.Create, readsMissing("missing", workload.MaxSources), nil)
	dryRun.DryRun = ptr.To(true)
	other := request(admissionv1.Create, readsMissing("missing", workload.MaxSources), nil)
	other.Namespace = "other"
	few := request(admissionv1.Create, readsMissing("few", 3), nil)

	var gets atomic.Int64
	h := newHandler(t, nil)
	h.Namespaces = namespaces{"ns": injected, "other": injected}
	h.Sources = sources.Reader{
		Cache:  fake.NewClientBuilder().Build(),
		Live:   countingLive(&gets),
		Misses: sources.NewMisses(sources.DefaultMissTTL, sources.DefaultMissEntries, nil),
	}
	// In order: each step sees the misses the ones before it confirmed.
	steps := []struct {
		name string
		req  admission.Request
		want int64
	}{
		{"256 missing", create, sources.DefaultLivePerLookup},
		{"256 missing again", create, sources.DefaultLivePerLookup},
		{"256 missing, dry-run", dryRun, 0},
		{"256 missing, another namespace", other, sources.DefaultLivePerLookup},
		{"3 missing", few, 3},
		{"3 missing again", few, 3},
	}
	for _, s := range steps {
		gets.Store(0)
		if resp := h.Handle(context.Background(), s.req); !resp.Allowed {
			t.Fatalf("%s: denied", s.name)
		}
		got := gets.Load()
		t.Logf("%s: %d live GETs", s.name, got)
		if got != s.want {
			t.Errorf("%s: %d live GETs, want %d", s.name, got, s.want)
		}
	}
}
