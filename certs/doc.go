// Package certs manages the webhook's serving certificate when cert-manager is
// not installed, and for local end-to-end runs where the webhook listens on
// https://127.0.0.1:PORT outside the cluster and the apiserver calls it by URL.
//
// A [Manager] keeps a private CA and a serving certificate in one Secret that
// every replica shares, injects the CA into every webhook's clientConfig.caBundle
// of a MutatingWebhookConfiguration, renews both before they expire, and writes
// tls.crt/tls.key into the webhook server's cert dir. controller-runtime's
// webhook server watches that dir (certwatcher), so a renewed certificate is
// served without a restart.
//
// The same certificate serves the metrics (cmd/confighash/app). A scraper
// must verify it without the Secret, which holds the CA's key: with
// Options.CABundleConfigMap the caBundle is also published, key ca.crt, in
// a ConfigMap beside the Secret, the way kube-root-ca.crt publishes the
// cluster CA. A rotation treats that ConfigMap like the webhook
// configuration: it switches only once both hold the next CA, so a scraper
// that reloads its CA file verifies the metrics at every stage.
//
// A CA rotation runs in stages (see rotation.go): the next CA is published
// in the caBundle beside the current one; once a replica has read it back
// from every webhook of the configuration, and Options.CAPropagationDelay
// later, the serving certificate switches to it; the old CA stays in the
// caBundle for Options.CAOverlap, so replicas that still serve a certificate
// from it keep working until their next check, and is then dropped. The
// apiserver therefore never meets a serving certificate it does not trust
// yet. A CA that is already unusable is replaced at once.
//
// # Wiring
//
// controller-runtime starts webhook servers before other runnables, and the
// webhook server refuses to start without tls.crt/tls.key in its cert dir. Call
// [Manager.EnsureWithRetry] before starting the manager, then add the Manager
// to it (it is a manager.Runnable) to keep the certificate fresh, and register
// [Manager.Ready] as a readiness check:
//
//	certMgr := certs.New(liveClient, certs.Options{...})
//	if err := certMgr.EnsureWithRetry(ctx); err != nil { ... }
//	_ = mgr.Add(certMgr)
//	_ = mgr.AddReadyzCheck("certs", certMgr.Ready)
//
// The client must be uncached (for example client.New, not mgr.GetClient()):
// the Manager reads Secrets and MutatingWebhookConfigurations directly and
// must not start informers for them.
//
// # Why not github.com/open-policy-agent/cert-controller
//
// We evaluated cert-controller v0.16.0 and chose not to use it: its serving
// certificate carries DNS SANs only, so it cannot be served on an IP address
// such as 127.0.0.1, which URL-mode webhooks on loopback need; it considers
// the certificate ready only once the Secret shows up in the cert dir through
// a volume mount, which does not exist when the webhook runs out of cluster;
// and it pulls in github.com/pkg/errors and go.uber.org/atomic.
package certs
