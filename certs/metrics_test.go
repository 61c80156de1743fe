package certs

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// TestExpiryMetric: the gauge is 0 before a certificate is in place, then
// the NotAfter of the certificate Ensure wrote into the Secret.
func TestExpiryMetric(t *testing.T) {
	ctx := t.Context()
	c := fake.NewClientBuilder().WithObjects(testWebhookConfiguration()).Build()
	m, _ := newTestManager(t, c, testNow)
	reg := prometheus.NewPedanticRegistry()
	if err := NewMetrics(reg, m); err != nil {
		t.Fatal(err)
	}
	if got := gathered(t, reg); got != 0 {
		t.Errorf("before Ensure: %v, want 0", got)
	}
	if err := m.Ensure(ctx); err != nil {
		t.Fatal(err)
	}
	want := mustParseCert(t, getSecret(ctx, t, c).Data[SecretCertKey]).NotAfter.Unix()
	if got := gathered(t, reg); got != float64(want) {
		t.Errorf("after Ensure: %v, want the serving certificate's NotAfter %d", got, want)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %v", problems, err)
	}
}

func gathered(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() == ExpiryMetric {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("%s not gathered", ExpiryMetric)
	return 0
}
