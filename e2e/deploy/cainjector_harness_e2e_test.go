//go:build e2e

package deploy

import (
	"context"
	"fmt"
	"testing"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	"github.com/cert-manager/cert-manager/pkg/controller/cainjector"
	"github.com/go-logr/logr/funcr"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/confighash/confighash/e2e/controlplane"
)

// cainjectorUserAgent is what the cainjector's field manager is derived
// from (the part before the first "/"), as in cert-manager's own binary.
const cainjectorUserAgent = "cert-manager-cainjector/v1.21.2 (confighash e2e harness)"

// startCAInjector runs cert-manager's cainjector in this process: the
// reconcilers, watches and indexes of the cainjector package of the
// cert-manager module this module requires, registered by its own
// RegisterAllInjectors. Only the manager around them is ours, set up as
// cert-manager's binary sets up its own (no leader election here: one
// replica): Secrets are never read from the cache, because the injector
// watches only their metadata and reads ca.crt with a live GET. Only the
// MutatingWebhookConfiguration reconciler is enabled, with the Certificate
// data source, which is what `cert-manager.io/inject-ca-from` needs.
//
// It stops when the test ends; log holds what the injector logged.
func startCAInjector(t *testing.T, admin *rest.Config, log *controlplane.SyncBuffer) {
	t.Helper()
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, admissionregistrationv1.AddToScheme, cmapi.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	cfg := rest.CopyConfig(admin)
	cfg.UserAgent = cainjectorUserAgent

	// The cainjector logs through controller-runtime's global logger; into
	// a buffer, since it may still log after the test has returned.
	logger := funcr.New(func(prefix, args string) {
		fmt.Fprintf(log, "%s %s\n", prefix, args)
	}, funcr.Options{Verbosity: 2})
	ctrl.SetLogger(logger)

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme,
		Logger:                 logger,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Client: client.Options{Cache: &client.CacheOptions{
			DisableFor: []client.Object{&corev1.Secret{}},
		}},
		// A second run in this process (-count=2) registers controllers of
		// the same names again.
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatalf("creating the cainjector's manager: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	if err := cainjector.RegisterAllInjectors(ctx, mgr, cainjector.SetupOptions{
		EnableCertificatesDataSource: true,
		EnabledReconcilersFor: map[string]bool{
			cainjector.MutatingWebhookConfigurationName: true,
		},
	}); err != nil {
		cancel()
		t.Fatalf("registering cert-manager's injectors: %v", err)
	}

	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the cainjector stopped with: %v", err)
		}
		if t.Failed() {
			t.Logf("cainjector log:\n%s", log.String())
		}
	})
}
