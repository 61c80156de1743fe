package app

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/pinner"
	"github.com/confighash/confighash/webhook"
)

// addPinning serves the pod webhook (--pinning) and lets the workload
// webhook w tell a rollback from an edit. The pinner reads live, not
// through the cache: a snapshot another replica made a moment ago must be
// found, and the pinner reads only what one pod's revision names (on
// admissionClient: the pod webhook's slots bound it).
func addPinning(mgr manager.Manager, key []byte, policy injection.Policy, o Options, callers *webhook.Callers, w *webhook.Handler, m *webhook.Metrics) error {
	live, err := admissionClient(mgr)
	if err != nil {
		return fmt.Errorf("building the pinner's client: %w", err)
	}
	p := &pinner.Pinner{Client: live, Key: key}
	w.Revisions = p
	h := &webhook.PinHandler{
		Decoder:    admission.NewDecoder(mgr.GetScheme()),
		Policy:     policy,
		Namespaces: w.Namespaces,
		Pinner:     p,
		Callers:    callers,
		Metrics:    m,
		Unpinned:   webhook.NewUnpinnedEvents(mgr.GetEventRecorder(contract.EventSource)),
	}
	mgr.GetWebhookServer().Register(webhook.PinPath, callers.Endpoint(h, o.Webhook.Limits(m)))
	return addSnapshotGC(mgr, key, policy, o, w.Namespaces)
}
