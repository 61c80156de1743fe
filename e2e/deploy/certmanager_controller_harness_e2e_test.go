//go:build e2e

package deploy

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	controllerpkg "github.com/cert-manager/cert-manager/pkg/controller"
	"github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crca "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsigned "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"
	// The Issuer kinds the overlay uses: each registers its setup (the
	// issuers controller's Ready check) with cert-manager's issuer
	// registry when imported, as cert-manager's binary imports them.
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/go-logr/logr/funcr"

	"github.com/confighash/confighash/e2e/controlplane"
)

// certManagerControllers are the controllers of cert-manager's controller
// binary that issue and renew a Certificate from a namespaced selfSigned or
// CA Issuer: the certificates controllers (trigger, key manager, request
// manager, issuing, readiness, revision manager), the CertificateRequest
// approver and signers of those two kinds, and the Issuer readiness
// controller. The ACME, Vault, Venafi, ClusterIssuer and shim controllers
// are left out: nothing here uses them.
func certManagerControllers() []string {
	return []string{
		issuers.ControllerName,
		approver.ControllerName,
		crselfsigned.CRControllerName,
		crca.CRControllerName,
		trigger.ControllerName,
		keymanager.ControllerName,
		requestmanager.ControllerName,
		issuing.ControllerName,
		readiness.ControllerName,
		revisionmanager.ControllerName,
	}
}

// certManagerWorkers is the binary's number of workers per controller.
const certManagerWorkers = 5

// startCertManagerController runs cert-manager's issuing controllers in this
// process, from the cert-manager module this module requires: each is built
// by the constructor it registers with cert-manager's controller package,
// from a ContextFactory made as cert-manager's binary makes it (the
// binary's defaults for the options these controllers read; no leader
// election, one replica), and the shared informer factories are started
// after every controller has asked for its informers, as the binary does.
// cert-manager's webhook does not run: nothing validates or defaults the
// cert-manager objects, which the overlay spells out in full.
//
// It stops when the test ends; log holds what the controllers logged.
func startCertManagerController(t *testing.T, kubeconfig string, log *controlplane.SyncBuffer) {
	t.Helper()
	logger := funcr.New(func(prefix, args string) {
		fmt.Fprintf(log, "%s %s\n", prefix, args)
	}, funcr.Options{Verbosity: 2})
	ctx, cancel := context.WithCancel(logf.NewContext(context.Background(), logger, "cert-manager-controller"))

	factory, err := controllerpkg.NewContextFactory(ctx, controllerpkg.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   20,
		KubernetesAPIBurst: 50,
		IssuerOptions:      controllerpkg.IssuerOptions{ClusterResourceNamespace: "kube-system"},
		CertificateOptions: controllerpkg.CertificateOptions{
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
	})
	if err != nil {
		cancel()
		t.Fatalf("building cert-manager's controller context: %v", err)
	}
	known, names := controllerpkg.Known(), certManagerControllers()
	var wg sync.WaitGroup
	errs := make(chan error, len(names))
	for _, name := range names {
		construct, ok := known[name]
		if !ok {
			cancel()
			t.Fatalf("cert-manager registers no controller %q", name)
		}
		c, err := construct(factory)
		if err != nil {
			cancel()
			t.Fatalf("constructing cert-manager's %s controller: %v", name, err)
		}
		wg.Go(func() {
			if err := c.Run(certManagerWorkers, ctx); err != nil {
				errs <- fmt.Errorf("%s: %w", name, err)
			}
		})
	}
	shared, err := factory.Build()
	if err != nil {
		cancel()
		t.Fatalf("building cert-manager's shared context: %v", err)
	}
	shared.SharedInformerFactory.Start(ctx.Done())
	shared.KubeSharedInformerFactory.Start(ctx.Done())

	t.Cleanup(func() {
		cancel()
		wg.Wait()
		shared.SharedInformerFactory.Shutdown()
		shared.KubeSharedInformerFactory.Shutdown()
		close(errs)
		for err := range errs {
			t.Errorf("cert-manager's controller stopped with: %v", err)
		}
		if t.Failed() {
			t.Logf("cert-manager controller log:\n%s", log.String())
		}
	})
}
