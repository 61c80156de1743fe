package certs

import (
	"errors"
	"fmt"
	"net"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Keys of the Secret named by Options.SecretKey.
const (
	// SecretCACertKey holds the PEM CA certificate that signs the serving certificate.
	SecretCACertKey = "ca.crt"
	// SecretCAKeyKey holds the PEM (PKCS#8) private key of the CA.
	SecretCAKeyKey = "ca.key"
	// SecretPreviousCACertKey holds the CA replaced by the last rotation,
	// kept in the caBundle until SecretPreviousCAUntilKey (and never past
	// its expiry).
	SecretPreviousCACertKey = "ca-previous.crt"
	// SecretPreviousCAUntilKey holds the RFC 3339 time at which the
	// previous CA leaves the caBundle: the bounded overlap after a switch.
	SecretPreviousCAUntilKey = "ca-previous.until"
	// SecretNextCACertKey and SecretNextCAKeyKey hold the CA that a rotation
	// has published in the caBundle but does not sign with yet.
	SecretNextCACertKey = "ca-next.crt"
	SecretNextCAKeyKey  = "ca-next.key"
	// SecretNextCATrustedSinceKey holds the RFC 3339 time at which a replica
	// first read the next CA back from every webhook's caBundle.
	SecretNextCATrustedSinceKey = "ca-next.trusted-since"
	// SecretCertKey holds the PEM serving certificate (same name as in a kubernetes.io/tls Secret).
	SecretCertKey = "tls.crt"
	// SecretKeyKey holds the PEM (PKCS#8) private key of the serving certificate.
	SecretKeyKey = "tls.key"
)

// Names of the files written into Options.CertDir. They are controller-runtime's
// webhook server defaults (webhook.Options.CertName/KeyName).
const (
	CertFileName = "tls.crt"
	KeyFileName  = "tls.key"
)

// Defaults applied by New for zero-valued Options fields.
const (
	DefaultCAValidity    = 10 * 365 * 24 * time.Hour
	DefaultCertValidity  = 365 * 24 * time.Hour
	DefaultCheckInterval = time.Hour
	DefaultFieldOwner    = "confighash"
	// DefaultCAPropagationDelay: see Options.CAPropagationDelay.
	DefaultCAPropagationDelay = 5 * time.Minute
	// DefaultCAOverlap is the least default of Options.CAOverlap.
	DefaultCAOverlap = 24 * time.Hour
)

// Options configures a Manager. Zero values get the defaults documented per field.
type Options struct {
	// SecretKey is the Secret holding ca.crt, ca.key, tls.crt, tls.key and,
	// during a CA rotation, the ca-next.* and ca-previous.* keys. Required.
	SecretKey types.NamespacedName
	// WebhookConfigName is the MutatingWebhookConfiguration whose webhooks get
	// the CA bundle. Empty means no injection (the caller manages caBundle).
	WebhookConfigName string
	// CABundleConfigMap is a ConfigMap in SecretKey's namespace into which
	// the caBundle is published (key ca.crt), for other clients of the
	// serving certificate, such as a Prometheus scraping the metrics served
	// with it. A CA rotation waits for it as for the webhook configuration.
	// Empty means none.
	CABundleConfigMap string
	// DNSNames and IPAddresses are the SANs of the serving certificate. At
	// least one of them is required. IP SANs are what make URL-mode webhooks
	// on https://127.0.0.1:PORT verifiable.
	DNSNames    []string
	IPAddresses []net.IP
	// CertDir receives tls.crt and tls.key (key mode 0600), written atomically
	// and only when their content changes. Empty means no files are written
	// (for example a one-shot job that only prepares the Secret and caBundle).
	CertDir string
	// CAValidity is the lifetime of a new CA. Default 10 years.
	CAValidity time.Duration
	// CertValidity is the lifetime of a new serving certificate, capped at the
	// CA's expiry. Default 1 year. Must not exceed CAValidity.
	CertValidity time.Duration
	// RenewBefore renews a certificate when less than this remains of its
	// validity. Default: a third of the certificate's validity (CAValidity/3
	// for the CA, CertValidity/3 for the serving certificate). When set, it
	// applies to both and must be shorter than CertValidity.
	RenewBefore time.Duration
	// CheckInterval is how often Start re-checks the Secret, files and
	// caBundle. Default 1 hour.
	CheckInterval time.Duration
	// FieldOwner is the field manager for writes. Default "confighash".
	FieldOwner string

	// A CA rotation first publishes the next CA beside the current one in
	// the caBundle, waits until the apiserver has it, then switches the
	// serving certificate to it, and drops the old CA after CAOverlap.
	//
	// CAPropagationDelay is how long the next CA must have been read back
	// from every webhook's caBundle before the serving certificate switches
	// to it: the time each apiserver takes to see the new configuration
	// through its watch. Default 5 minutes.
	CAPropagationDelay time.Duration
	// CAOverlap is how long the old CA stays in the caBundle after the
	// switch, so that replicas still serving a certificate from it keep
	// working until their next check picks up the new one. It must exceed
	// CheckInterval by a tenth (the check's jitter). Default 24 hours, or
	// twice CheckInterval if that is longer.
	CAOverlap time.Duration
}

// withDefaults returns a copy of o with zero values replaced by defaults. The
// slices are copied so later changes by the caller cannot race with Ensure.
func (o Options) withDefaults() Options {
	if o.CAValidity == 0 {
		o.CAValidity = DefaultCAValidity
	}
	if o.CertValidity == 0 {
		o.CertValidity = DefaultCertValidity
	}
	if o.CheckInterval == 0 {
		o.CheckInterval = DefaultCheckInterval
	}
	if o.FieldOwner == "" {
		o.FieldOwner = DefaultFieldOwner
	}
	if o.CAPropagationDelay == 0 {
		o.CAPropagationDelay = DefaultCAPropagationDelay
	}
	if o.CAOverlap == 0 {
		o.CAOverlap = max(DefaultCAOverlap, 2*o.CheckInterval)
	}
	o.DNSNames = append([]string(nil), o.DNSNames...)
	ips := make([]net.IP, 0, len(o.IPAddresses))
	for _, ip := range o.IPAddresses {
		ips = append(ips, append(net.IP(nil), ip...))
	}
	o.IPAddresses = ips
	return o
}

// caRenewBefore and certRenewBefore resolve RenewBefore per certificate.
func (o Options) caRenewBefore() time.Duration {
	if o.RenewBefore > 0 {
		return o.RenewBefore
	}
	return o.CAValidity / 3
}

func (o Options) certRenewBefore() time.Duration {
	if o.RenewBefore > 0 {
		return o.RenewBefore
	}
	return o.CertValidity / 3
}

// validate checks options after defaulting. The ordering constraints exist to
// rule out settings under which every check would issue a new certificate.
func (o Options) validate() error {
	var errs []error
	if o.SecretKey.Namespace == "" || o.SecretKey.Name == "" {
		errs = append(errs, fmt.Errorf("SecretKey needs a namespace and a name, got %q", o.SecretKey.String()))
	}
	if len(o.DNSNames) == 0 && len(o.IPAddresses) == 0 {
		errs = append(errs, errors.New("at least one of DNSNames or IPAddresses is required"))
	}
	for _, name := range o.DNSNames {
		if name == "" {
			errs = append(errs, errors.New("DNSNames contains an empty name"))
		}
	}
	for _, ip := range o.IPAddresses {
		if len(ip) != net.IPv4len && len(ip) != net.IPv6len {
			errs = append(errs, fmt.Errorf("IPAddresses contains an invalid IP %v", []byte(ip)))
		}
	}
	if o.CAValidity < 0 || o.CertValidity < 0 || o.RenewBefore < 0 || o.CheckInterval < 0 || o.CAPropagationDelay < 0 || o.CAOverlap < 0 {
		errs = append(errs, errors.New("durations must not be negative"))
	}
	if o.CertValidity > o.CAValidity {
		// The serving certificate is capped at the CA's expiry; if it could
		// outlive the CA's renewal window it would be re-issued on every check.
		errs = append(errs, fmt.Errorf("CertValidity (%s) must not exceed CAValidity (%s)", o.CertValidity, o.CAValidity))
	}
	if o.RenewBefore > 0 && o.RenewBefore >= o.CertValidity {
		errs = append(errs, fmt.Errorf("RenewBefore (%s) must be shorter than CertValidity (%s)", o.RenewBefore, o.CertValidity))
	}
	if o.CAOverlap <= o.CheckInterval+o.CheckInterval/10 {
		// A replica picks up the new serving certificate at its next check;
		// until then the apiserver must still trust the old CA.
		errs = append(errs, fmt.Errorf("CAOverlap (%s) must exceed CheckInterval (%s) by more than a tenth", o.CAOverlap, o.CheckInterval))
	}
	if len(errs) > 0 {
		return fmt.Errorf("invalid certs options: %w", errors.Join(errs...))
	}
	return nil
}
