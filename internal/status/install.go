package status

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/webhook"
)

// InstallOptions say where confighash is meant to be installed.
type InstallOptions struct {
	// WebhookConfigName is the MutatingWebhookConfiguration to check.
	WebhookConfigName string
	// ConfighashNamespace is where confighash runs; the namespaceSelector
	// must exclude it.
	ConfighashNamespace string
	// ServedNamespaces are the only namespaces a namespaced-mode
	// confighash serves (its --namespaces); the selector must name them.
	ServedNamespaces []string
	// DialTimeout bounds the TLS check; 0 means 5 s.
	DialTimeout time.Duration
	// Now is the time certificates are checked at; zero means now.
	Now time.Time
}

// The names of the checks, in the order they are made.
const (
	CheckWebhookConfiguration = "webhook-configuration"
	CheckCABundle             = "ca-bundle"
	CheckNamespaceSelector    = "namespace-selector"
	CheckFailurePolicy        = "failure-policy"
	CheckReachable            = "reachable"
)

// InstallReport is what `confighash status --check-install` found; `-o
// json` prints it as is:
//
//	{"schemaVersion": "status.confighash.dev/v1", "webhookConfiguration": "confighash", "ok": false,
//	 "checks": [{"name": "ca-bundle", "ok": true, "detail": "…"}, …]}
type InstallReport struct {
	SchemaVersion        string  `json:"schemaVersion"`
	WebhookConfiguration string  `json:"webhookConfiguration"`
	OK                   bool    `json:"ok"`
	Checks               []Check `json:"checks"`
}

// Check is one verified property of the installation.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
}

// CheckInstall verifies that the webhook is registered so that it can
// stamp: the configuration exists and has confighash's webhook, its
// caBundle holds valid certificates, its namespaceSelector is the one
// webhook.Configuration builds, its failurePolicy is Ignore, and it can be
// reached. A failed check is reported, not returned as an error.
func CheckInstall(ctx context.Context, c client.Reader, o InstallOptions) *InstallReport {
	r := &InstallReport{SchemaVersion: SchemaVersion, WebhookConfiguration: o.WebhookConfigName}
	add := func(name string, err error, ok string) {
		if err != nil {
			r.Checks = append(r.Checks, Check{Name: name, Detail: err.Error()})
			return
		}
		r.Checks = append(r.Checks, Check{Name: name, OK: true, Detail: ok})
	}

	hook, err := readWebhook(ctx, c, o.WebhookConfigName)
	add(CheckWebhookConfiguration, err, fmt.Sprintf("mutatingwebhookconfiguration %s has webhook %s", o.WebhookConfigName, webhook.Name))
	if err != nil {
		return r
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	certs, err := parseCABundle(hook.ClientConfig.CABundle, now)
	add(CheckCABundle, err, describeCerts(certs))
	add(CheckNamespaceSelector, checkSelector(hook, o), "matches the one confighash builds: "+selectorString(hook.NamespaceSelector))
	add(CheckFailurePolicy, checkFailurePolicy(hook.FailurePolicy),
		"Ignore: an unreachable webhook never blocks a write; the hook stamps what it missed")

	timeout := o.DialTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	switch cc := hook.ClientConfig; {
	case cc.URL != nil:
		detail, err := checkURL(ctx, *cc.URL, cc.CABundle, timeout)
		add(CheckReachable, err, detail)
	case cc.Service != nil:
		detail, err := checkService(ctx, c, cc.Service)
		add(CheckReachable, err, detail)
	default:
		add(CheckReachable, errors.New("clientConfig has neither url nor service"), "")
	}

	r.OK = true
	for _, ch := range r.Checks {
		r.OK = r.OK && ch.OK
	}
	return r
}

// readWebhook returns confighash's webhook in configuration name.
func readWebhook(ctx context.Context, c client.Reader, name string) (*admissionregistrationv1.MutatingWebhook, error) {
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, cfg); err != nil {
		return nil, fmt.Errorf("reading mutatingwebhookconfiguration %s: %w", name, err)
	}
	for i := range cfg.Webhooks {
		if cfg.Webhooks[i].Name == webhook.Name {
			return &cfg.Webhooks[i], nil
		}
	}
	return nil, fmt.Errorf("mutatingwebhookconfiguration %s has no webhook named %s", name, webhook.Name)
}

func checkSelector(hook *admissionregistrationv1.MutatingWebhook, o InstallOptions) error {
	// The selector of the injection policy, as webhook.Configuration and,
	// in namespaced mode, out-of-cluster mode and the manifests build it.
	want := injection.New(o.ConfighashNamespace, o.ServedNamespaces...).NamespaceSelector()
	got, wantText := selectorString(hook.NamespaceSelector), selectorString(want)
	if got != wantText {
		only := ""
		if len(o.ServedNamespaces) > 0 {
			only = ", only " + strings.Join(o.ServedNamespaces, ",")
		}
		return fmt.Errorf("is %q, want %q (the injection label, excluding kube-system and %s%s)", got, wantText, o.ConfighashNamespace, only)
	}
	return nil
}

// selectorString renders a selector canonically, requirements and values
// sorted, so that equal selectors written in another order compare equal.
func selectorString(s *metav1.LabelSelector) string {
	sel, err := metav1.LabelSelectorAsSelector(normalSelector(s))
	if err != nil {
		return fmt.Sprintf("invalid (%v)", err)
	}
	if sel.Empty() {
		return "(everything)"
	}
	return sel.String()
}

func checkFailurePolicy(p *admissionregistrationv1.FailurePolicyType) error {
	switch {
	case p == nil:
		return errors.New("unset, which means Fail: an unreachable webhook would block writes; want Ignore")
	case *p != admissionregistrationv1.Ignore:
		return fmt.Errorf("%s: an unreachable webhook blocks every write of a workload in an injected namespace; want Ignore", *p)
	}
	return nil
}

// checkService checks that the webhook's Service exists, serves the port
// the webhook is called on, and has ready endpoints.
func checkService(ctx context.Context, c client.Reader, ref *admissionregistrationv1.ServiceReference) (string, error) {
	name := ref.Namespace + "/" + ref.Name
	port := int32(443)
	if ref.Port != nil {
		port = *ref.Port
	}
	svc := &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, svc); err != nil {
		return "", fmt.Errorf("reading service %s: %w", name, err)
	}
	found := false
	for _, p := range svc.Spec.Ports {
		found = found || p.Port == port
	}
	if !found {
		return "", fmt.Errorf("service %s has no port %d, which the webhook is called on", name, port)
	}
	list := &discoveryv1.EndpointSliceList{}
	if err := c.List(ctx, list, client.InNamespace(ref.Namespace), client.MatchingLabels{discoveryv1.LabelServiceName: ref.Name}); err != nil {
		return "", fmt.Errorf("listing endpointslices of service %s: %w", name, err)
	}
	ready := 0
	for _, s := range list.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready == nil || *e.Conditions.Ready {
				ready += len(e.Addresses)
			}
		}
	}
	if ready == 0 {
		return "", fmt.Errorf("service %s has no ready endpoints: no confighash replica is ready", name)
	}
	return fmt.Sprintf("service %s port %d has %d ready endpoint(s); TLS through a Service cannot be verified from outside the cluster",
		name, port, ready), nil
}

// checkURL dials the webhook's URL from here and verifies its serving
// certificate against caBundle (the system roots when it is empty, as the
// API server does) and the URL's host.
func checkURL(ctx context.Context, raw string, caBundle []byte, timeout time.Duration) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("parsing url %q: %w", raw, err)
	}
	if u.Scheme != "https" {
		return "", fmt.Errorf("url %q: the API server calls webhooks over https only", raw)
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	if _, err := strconv.Atoi(port); err != nil {
		return "", fmt.Errorf("url %q: bad port", raw)
	}
	addr := net.JoinHostPort(u.Hostname(), port)
	// nil roots make crypto/tls use the system roots.
	var roots *x509.CertPool
	rootsName := "the system roots (caBundle is empty)"
	if len(caBundle) > 0 {
		certs, err := parseCABundle(caBundle, time.Time{})
		if err != nil {
			return "", fmt.Errorf("cannot verify %s without a valid caBundle", addr)
		}
		roots, rootsName = poolOf(certs), "the caBundle"
	}
	leaf, err := dialTLS(ctx, addr, u.Hostname(), roots, timeout)
	if err != nil {
		return "", fmt.Errorf("TLS to %s from here: %w", addr, err)
	}
	return fmt.Sprintf("TLS handshake with %s from here verified against %s (serving certificate %s, valid until %s)",
		addr, rootsName, leaf.Subject.String(), leaf.NotAfter.UTC().Format(time.RFC3339)), nil
}

// normalSelector returns s with single-value In requirements written as
// matchLabels, as most people write them; nil becomes the API default, the
// empty selector, which selects everything.
func normalSelector(s *metav1.LabelSelector) *metav1.LabelSelector {
	out := &metav1.LabelSelector{MatchLabels: map[string]string{}}
	if s == nil {
		return out
	}
	maps.Copy(out.MatchLabels, s.MatchLabels)
	for _, r := range s.MatchExpressions {
		if v, ok := out.MatchLabels[r.Key]; r.Operator == metav1.LabelSelectorOpIn && len(r.Values) == 1 && (!ok || v == r.Values[0]) {
			out.MatchLabels[r.Key] = r.Values[0]
			continue
		}
		out.MatchExpressions = append(out.MatchExpressions, r)
	}
	return out
}
