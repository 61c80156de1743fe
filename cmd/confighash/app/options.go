package app

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"net"
	"net/url"
	"strconv"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/confighash/confighash/internal/restamp"
	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/workload"
	"github.com/confighash/confighash/webhook"
)

// Cert modes.
const (
	// CertModeSelf makes confighash issue and renew its own serving
	// certificate and inject the CA into its webhook configuration.
	CertModeSelf = "self"
	// CertModeExternal serves files someone else (cert-manager) keeps in
	// the cert dir.
	CertModeExternal = "external"
)

// Options are the flags of `confighash serve`.
type Options struct {
	Kubeconfig string
	Namespace  string
	// PodName and PodUID are confighash's own pod (the downward API's
	// metadata.name and metadata.uid), which Events about confighash itself
	// are recorded on: a custom kind the hook refuses to watch. Empty
	// records none (out of cluster).
	PodName string
	PodUID  string
	// Namespaces, when set, is namespaced mode: the caches, the watches,
	// the webhook and the hook cover only these namespaces, so confighash
	// needs to read Secrets nowhere else (Roles instead of a ClusterRole).
	Namespaces []string

	WebhookPort int
	WebhookHost string
	CertDir     string
	CertMode    string
	CertSecret  string
	// CABundleConfigMap, with --cert-mode=self, is the ConfigMap the CA
	// bundle is published in (key ca.crt), for scrapers of the metrics,
	// which are served with the webhook's certificate. Empty: none.
	CABundleConfigMap string
	ServiceName       string
	WebhookConfigName string
	// WebhookURL switches on out-of-cluster mode: confighash registers its
	// own webhook configuration with this URL and a self-managed CA.
	WebhookURL string
	// WebhookClientCAFile, when set, limits the webhook's answers to the
	// apiserver: only a caller presenting a client certificate signed by
	// one of these CAs (with one of WebhookClientNames, when set) gets an
	// answer that depends on its request. Anyone else who reaches the port
	// could otherwise learn, from the answers, which Secrets exist in a
	// served namespace (see webhook.Callers).
	WebhookClientCAFile string
	// WebhookClientNames are the common names or DNS names accepted in the
	// caller's certificate; empty accepts any the CAs signed.
	WebhookClientNames []string

	HMACKeySecret string

	MetricsAddr string
	// MetricsSecure puts the metrics behind HTTPS and the apiserver's
	// authentication and authorization, as kube-controller-manager does:
	// the counts are harmless, but an open port on every node's pod network
	// is not what a platform team expects from an admission component.
	MetricsSecure bool
	HealthAddr    string

	LeaderElect bool

	// Webhook holds the webhook's limits (--webhook-max-in-flight,
	// --webhook-max-connections-per-address); the body limit and read
	// timeout are fixed by what the apiserver sends (see webhook.Limits).
	Webhook webhook.Options
	// LiveReadsPerRequest bounds the live GETs one admission may make to
	// confirm cache misses.
	LiveReadsPerRequest int
	// IgnoreHelmReleaseSecrets leaves Secrets of type helm.sh/release.v1
	// out of the Secret watch: Helm keeps thousands, no pod reads them, and
	// the informer would decode and digest each (see sources.SecretCache).
	IgnoreHelmReleaseSecrets bool
	// Pinning serves the pod webhook that points new pods of namespaces
	// labelled confighash.dev/pinning=enabled at snapshots of the content
	// their stamp names (package pinner). Off by default while pinning is
	// built: see docs/design/pinning.md for what is not yet.
	Pinning bool
	// MaxSourceKeys bounds the keys of one ConfigMap or Secret whose
	// digests are cached; a source with more is not stamped (see
	// sources.Slimmer).
	MaxSourceKeys int
	// MemoryLimitRatio is the share of the container's memory limit given
	// to the Go collector as its soft limit, unless GOMEMLIMIT is set.
	MemoryLimitRatio float64

	// KubeAPIQPS and KubeAPIBurst bound the clients' requests, per
	// resource kind (client-go keeps a token bucket per REST client, and
	// controller-runtime makes one per kind). client-go's defaults (5 QPS)
	// would turn a fan-out of hundreds of re-stamps into a minute; the
	// hook's own write budget is what protects the apiserver.
	KubeAPIQPS   float32
	KubeAPIBurst int

	// Hook are the config-update hook's settings, with their flags.
	Hook restamp.Options

	// WorkloadKinds are --workload-kind values: custom resources with a
	// pod template, stamped and re-stamped besides the built-in kinds.
	WorkloadKinds []string

	Zap zap.Options
}

// DefaultOptions are the flag defaults.
func DefaultOptions() Options {
	return Options{
		Namespace:         "confighash-system",
		WebhookPort:       9443,
		CertDir:           "/tmp/confighash/serving-certs",
		CertMode:          CertModeSelf,
		CertSecret:        "confighash-webhook-cert",
		CABundleConfigMap: "confighash-ca-bundle",
		ServiceName:       "confighash-webhook",
		WebhookConfigName: "confighash",
		HMACKeySecret:     "confighash-hmac-key",
		MetricsAddr:       ":8443",
		MetricsSecure:     true,
		HealthAddr:        ":8081",
		KubeAPIQPS:        100,
		KubeAPIBurst:      200,
		Hook:              restamp.DefaultOptions(),

		Webhook:             webhook.DefaultOptions(),
		LiveReadsPerRequest: sources.DefaultLivePerLookup,
		MaxSourceKeys:       sources.DefaultMaxKeys,
		MemoryLimitRatio:    DefaultMemoryLimitRatio,

		// No pod is meant to read Helm's release records.
		IgnoreHelmReleaseSecrets: true,
	}
}

func (o *Options) bind(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "path to a kubeconfig; empty means $KUBECONFIG, else in-cluster config, else ~/.kube/config")
	fs.StringVar(&o.Namespace, "namespace", o.Namespace, "namespace confighash runs in; holds its HMAC key, cert Secret and leader lease")
	fs.StringVar(&o.PodName, "pod-name", o.PodName, "this pod's name (downward API metadata.name), which Events about confighash itself are recorded on; empty records none")
	fs.StringVar(&o.PodUID, "pod-uid", o.PodUID, "this pod's UID (downward API metadata.uid), so that kubectl describe pod shows those Events")
	fs.StringSliceVar(&o.Namespaces, "namespaces", o.Namespaces, "namespaced mode: serve, cache and watch only these namespaces (comma list); empty serves every labelled namespace")
	fs.IntVar(&o.WebhookPort, "webhook-port", o.WebhookPort, "port the admission webhook listens on")
	fs.StringVar(&o.WebhookHost, "webhook-host", o.WebhookHost, "address the admission webhook listens on (empty: all)")
	fs.StringVar(&o.CertDir, "cert-dir", o.CertDir, "directory of the webhook's tls.crt and tls.key")
	fs.StringVar(&o.CertMode, "cert-mode", o.CertMode, `"self": issue, renew and inject our own certificates; "external": serve the files in --cert-dir as they are (cert-manager)`)
	fs.StringVar(&o.CertSecret, "cert-secret", o.CertSecret, "Secret holding the self-managed CA and serving certificate")
	fs.StringVar(&o.CABundleConfigMap, "ca-bundle-configmap", o.CABundleConfigMap, `with --cert-mode=self: ConfigMap in --namespace to publish the CA bundle in (key ca.crt), for Prometheus to verify the metrics' certificate; "" publishes none`)
	fs.StringVar(&o.ServiceName, "service-name", o.ServiceName, "Service in front of the webhook; names the self-managed certificate")
	fs.StringVar(&o.WebhookConfigName, "webhook-config-name", o.WebhookConfigName, "MutatingWebhookConfiguration to inject the CA into (and, with --webhook-url, to create)")
	fs.StringVar(&o.WebhookURL, "webhook-url", o.WebhookURL, "out-of-cluster mode: register the webhook at this https URL (e.g. https://127.0.0.1:9443) with a self-managed CA")
	fs.StringVar(&o.WebhookClientCAFile, "webhook-client-ca-file", o.WebhookClientCAFile, "PEM CA bundle for the client certificate the apiserver presents to webhooks (its admission configuration's kubeConfigFile); when set, a caller without such a certificate is answered allowed, unstamped, with a warning that names nothing; read at start")
	fs.StringSliceVar(&o.WebhookClientNames, "webhook-client-names", o.WebhookClientNames, "common names or DNS names accepted in that client certificate (comma list); empty accepts any certificate the --webhook-client-ca-file CAs signed")
	fs.StringVar(&o.HMACKeySecret, "hmac-key-secret", o.HMACKeySecret, "Secret holding the checksum HMAC key; created on first start")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", o.MetricsAddr, `metrics address; "0" disables`)
	fs.BoolVar(&o.MetricsSecure, "metrics-secure", o.MetricsSecure, "serve metrics over HTTPS, with the webhook's certificate from --cert-dir, to callers whose token may GET /metrics (checked with TokenReview and SubjectAccessReview); false serves plain HTTP to anyone")
	fs.StringVar(&o.HealthAddr, "health-probe-bind-address", o.HealthAddr, "address of /healthz and /readyz")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "elect a leader to run the config-update hook; every replica serves the webhook")
	o.Webhook.BindFlags(fs)
	fs.IntVar(&o.LiveReadsPerRequest, "live-reads-per-request", o.LiveReadsPerRequest, "live GETs one admission may make to confirm ConfigMaps and Secrets missing from the cache, and as many again to read the sources of a new or changed template fresh")
	fs.BoolVar(&o.Pinning, "pinning", o.Pinning, "experimental: point new pods of ReplicaSets, StatefulSets, DaemonSets and Jobs in namespaces labelled confighash.dev/pinning=enabled at snapshots of the content their stamp names, and keep a workload rolled back with kubectl rollout undo on its revision's content; needs the ClusterRole confighash-pinner bound there")
	fs.BoolVar(&o.IgnoreHelmReleaseSecrets, "ignore-helm-release-secrets", o.IgnoreHelmReleaseSecrets, "leave Secrets of type helm.sh/release.v1 out of the Secret watch; the webhook still reads one a template names, live")
	fs.IntVar(&o.MaxSourceKeys, "max-source-keys", o.MaxSourceKeys, "keys one ConfigMap or Secret may have and still be read: a workload reading one with more is not stamped or re-stamped (a warning says which); bounds the cache's memory per source")
	fs.Float64Var(&o.MemoryLimitRatio, "memory-limit-ratio", o.MemoryLimitRatio, "Go soft memory limit as a share of the container's cgroup memory limit; ignored when GOMEMLIMIT is set, 0 disables")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "queries per second to the apiserver, per resource kind (the webhooks' reads while they answer are bounded by --webhook-max-in-flight instead)")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "burst of queries to the apiserver")
	o.Hook.BindFlags(fs)
	// An array, not a slice flag: each value holds commas.
	fs.StringArrayVar(&o.WorkloadKinds, "workload-kind", o.WorkloadKinds, workload.KindFlagHelp)
	zfs := flag.NewFlagSet("zap", flag.ContinueOnError)
	o.Zap.BindFlags(zfs)
	fs.AddGoFlagSet(zfs)
}

// webhookEndpoint is where to listen, and with which certificate names, in
// out-of-cluster mode.
type webhookEndpoint struct {
	host string
	port int
	ip   net.IP
}

// validated is what validate resolves from the flags, once, for serve and
// for the permissions a command line needs.
type validated struct {
	// endpoint is where to listen in out-of-cluster mode (--webhook-url),
	// or nil.
	endpoint *webhookEndpoint
	// kinds are the kinds served (workloadKinds).
	kinds workload.Registry
}

// validate reports every flag out of range, each error naming its flag,
// and otherwise returns what the flags resolve to.
func (o *Options) validate() (validated, error) {
	var v validated
	var errs []error
	if o.WebhookPort < 1 || o.WebhookPort > 65535 {
		// 0 and below would leave controller-runtime's default or no
		// server at all behind a readiness check that passes.
		errs = append(errs, fmt.Errorf("--webhook-port must be within [1, 65535], not %d", o.WebhookPort))
	}
	if o.CertMode != CertModeSelf && o.CertMode != CertModeExternal {
		errs = append(errs, fmt.Errorf("--cert-mode must be %q or %q, not %q", CertModeSelf, CertModeExternal, o.CertMode))
	}
	if o.Namespace == "" {
		errs = append(errs, errors.New("--namespace must not be empty"))
	}
	errs = append(errs, validateNamespaces(o.Namespace, o.Namespaces)...)
	// Written so that NaN fails too: client-go builds no rate limiter for a
	// QPS that is not > 0, and every comparison with NaN is false.
	if !(o.KubeAPIQPS > 0) || math.IsInf(float64(o.KubeAPIQPS), 0) {
		errs = append(errs, errors.New("--kube-api-qps must be > 0 and finite"))
	}
	if o.KubeAPIBurst < 1 {
		errs = append(errs, errors.New("--kube-api-burst must be >= 1"))
	}
	if err := o.Webhook.Validate(); err != nil {
		errs = append(errs, err)
	}
	if o.LiveReadsPerRequest < 1 {
		errs = append(errs, errors.New("--live-reads-per-request must be >= 1"))
	}
	if !(o.MemoryLimitRatio >= 0 && o.MemoryLimitRatio <= 1) {
		errs = append(errs, errors.New("--memory-limit-ratio must be within [0, 1]"))
	}
	if o.MaxSourceKeys < 1 {
		errs = append(errs, errors.New("--max-source-keys must be >= 1"))
	}
	if err := o.Hook.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(o.WebhookClientNames) > 0 && o.WebhookClientCAFile == "" {
		errs = append(errs, errors.New("--webhook-client-names needs --webhook-client-ca-file"))
	}
	var err error
	if v.kinds, err = workloadKinds(o.WorkloadKinds); err != nil {
		errs = append(errs, err)
	}
	if o.WebhookURL != "" {
		if v.endpoint, err = parseWebhookURL(o.WebhookURL); err != nil {
			errs = append(errs, err)
		} else if o.CertMode != CertModeSelf {
			errs = append(errs, errors.New("--webhook-url needs --cert-mode=self"))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return validated{}, err
	}
	return v, nil
}

func parseWebhookURL(raw string) (*webhookEndpoint, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--webhook-url: %w", err)
	}
	if u.Scheme != "https" || u.Hostname() == "" || u.Port() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("--webhook-url %q: want https://HOST:PORT with no path", raw)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil || port < 1 || port > 65535 {
		return nil, fmt.Errorf("--webhook-url %q: bad port", raw)
	}
	return &webhookEndpoint{host: u.Hostname(), port: port, ip: net.ParseIP(u.Hostname())}, nil
}
