package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/certs"
	"github.com/confighash/confighash/injection"
	"github.com/confighash/confighash/metricsauth"
	"github.com/confighash/confighash/sources"
	"github.com/confighash/confighash/webhook"
	"github.com/confighash/confighash/workload"
)

// Serve runs the webhook (on every replica) and the config-update hook (on
// the leader) until ctx ends.
func Serve(ctx context.Context, o Options) error {
	ep, err := o.validate()
	if err != nil {
		return usageError{err}
	}
	kinds, err := o.kinds()
	if err != nil {
		return usageError{err}
	}
	logger := zap.New(zap.UseFlagOptions(&o.Zap))
	// controller-runtime's own components log through its package logger.
	ctrl.SetLogger(logger)
	ctx = log.IntoContext(ctx, logger)
	setMemoryLimit(ctx, o.MemoryLimitRatio)

	cfg, err := restConfig(o.Kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = o.KubeAPIQPS, o.KubeAPIBurst
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return fmt.Errorf("building scheme: %w", err)
	}
	// The caches are not running yet, so start-up reads and writes go live.
	live, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	// Before anything is written: a bad --workload-kind stops us here.
	probe, err := checkCustomKinds(ctx, cfg, kinds)
	if err != nil {
		return err
	}
	if ep != nil {
		if err := ensureNamespace(ctx, live, o.Namespace); err != nil {
			return err
		}
		if err := applyWebhookConfiguration(ctx, live, o, kinds, ep); err != nil {
			return err
		}
	}
	keyRef := types.NamespacedName{Namespace: o.Namespace, Name: o.HMACKeySecret}
	key, err := readHMACKey(ctx, live, keyRef, keyReadBackoff())
	if err != nil {
		return err
	}

	var certManager *certs.Manager
	if o.CertMode == CertModeSelf {
		certManager = newCertManager(live, o, ep)
		// The webhook server reads its certificate when it starts, which
		// the manager does before any other runnable: issue it first.
		if err := certManager.EnsureWithRetry(ctx); err != nil {
			return fmt.Errorf("preparing serving certificate: %w", err)
		}
	}

	sc := newSourceCache(ctx, o)
	mgr, err := newManager(cfg, scheme, o, ep, sc)
	if err != nil {
		return err
	}
	if err := sc.start(ctx, mgr); err != nil {
		return err
	}
	if certManager != nil {
		if err := mgr.Add(certManager); err != nil {
			return fmt.Errorf("adding certificate manager: %w", err)
		}
		if err := mgr.AddReadyzCheck("certificate", certManager.Ready); err != nil {
			return fmt.Errorf("adding readiness check: %w", err)
		}
	}
	// Each part registers its series, once, on the registry the manager's
	// metrics server serves.
	reg := metrics.Registry
	if err := addWebhook(ctx, mgr, reg, key, o.policy(), kinds, o, sc); err != nil {
		return err
	}
	if err := addHook(ctx, mgr, reg, key, kinds, probe, o); err != nil {
		return err
	}
	if err := addKeyKeeper(mgr, reg, live, keyRef, key); err != nil {
		return err
	}
	log.FromContext(ctx).Info("starting", "namespace", o.Namespace, "certMode", o.CertMode, "webhookURL", o.WebhookURL)
	return mgr.Start(ctx)
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := config.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("loading kubeconfig ($KUBECONFIG, else in-cluster, else ~/.kube/config): %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading --kubeconfig %s: %w", kubeconfig, err)
	}
	return cfg, nil
}

// metricsOptions serves metrics over HTTPS (a self-signed certificate
// controller-runtime generates) to callers the apiserver authenticates and
// allows to GET /metrics, unless --metrics-secure=false.
func metricsOptions(o Options) metricsserver.Options {
	opts := metricsserver.Options{BindAddress: o.MetricsAddr}
	if o.MetricsSecure {
		opts.SecureServing = true
		opts.FilterProvider = metricsauth.FilterProvider
	}
	return opts
}

func newManager(cfg *rest.Config, scheme *runtime.Scheme, o Options, ep *webhookEndpoint, sc *sourceCache) (manager.Manager, error) {
	server := ctrlwebhook.Options{Host: o.WebhookHost, Port: o.WebhookPort, CertDir: o.CertDir}
	if ep != nil {
		server.Host, server.Port = ep.host, ep.port
	}
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Scheme:                  scheme,
		Metrics:                 metricsOptions(o),
		HealthProbeBindAddress:  o.HealthAddr,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        "confighash.dev",
		LeaderElectionNamespace: o.Namespace,
		// Release the lease on a clean stop so a new leader takes over at
		// once during a rolling upgrade.
		LeaderElectionReleaseOnCancel: true,
		WebhookServer:                 ctrlwebhook.NewServer(server),
		Cache: cache.Options{
			DefaultNamespaces: cacheNamespaces(o.Namespaces),
			DefaultTransform:  cache.TransformStripManagedFields(),
			ByObject:          sc.byObject(o.IgnoreHelmReleaseSecrets),
		},
		NewClient: sc.newClient,
	})
	if err != nil {
		return nil, fmt.Errorf("creating manager: %w", err)
	}
	return mgr, nil
}

func newCertManager(live client.Client, o Options, ep *webhookEndpoint) *certs.Manager {
	co := certs.Options{
		SecretKey:         types.NamespacedName{Namespace: o.Namespace, Name: o.CertSecret},
		WebhookConfigName: o.WebhookConfigName,
		CertDir:           o.CertDir,
		DNSNames: []string{
			o.ServiceName + "." + o.Namespace + ".svc",
			o.ServiceName + "." + o.Namespace + ".svc.cluster.local",
		},
	}
	if ep != nil {
		co.DNSNames = []string{"localhost"}
		if ep.ip != nil {
			co.IPAddresses = []net.IP{ep.ip}
		} else if ep.host != "localhost" {
			co.DNSNames = append(co.DNSNames, ep.host)
		}
	}
	return certs.New(live, co)
}

// addWebhook registers the admission handler and the readiness checks that
// say it can be called: its certificate is served and its caches are synced.
func addWebhook(ctx context.Context, mgr manager.Manager, reg prometheus.Registerer, key []byte, policy injection.Policy, kinds workload.Registry, o Options, sc *sourceCache) error {
	// Start the config informers now, so readiness covers their sync and
	// the first admission request finds them warm.
	// Namespaces too: the handler applies the injection policy to every
	// request from the cached Namespace.
	for _, obj := range []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Namespace{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("starting informer for %T: %w", obj, err)
		}
	}
	m, err := webhook.NewMetrics(reg)
	if err != nil {
		return err
	}
	// Cache misses, and placeholders not filled yet, are read live,
	// within a per-request budget and a short memory of confirmed misses
	// (see sources.Reader).
	reader := sources.Reader{
		Cache:         sc.reader(mgr),
		Live:          mgr.GetAPIReader(),
		LivePerLookup: o.LiveReadsPerRequest,
		MaxKeys:       o.MaxSourceKeys,
		Misses:        sources.NewMisses(sources.DefaultMissTTL, sources.DefaultMissEntries, nil),
	}
	h := &webhook.Handler{
		Key:     key,
		Sources: reader,
		Decoder: admission.NewDecoder(mgr.GetScheme()),
		Metrics: m,
		Policy:  policy,
		Kinds:   kinds,
		// A namespace created a moment before its first workload may not
		// be cached yet; the apiserver, which called us, already has it.
		Namespaces: injection.CacheThenLive{Cache: mgr.GetCache(), Live: mgr.GetAPIReader()},
	}
	mgr.GetWebhookServer().Register(webhook.Path, webhook.Endpoint(h, webhook.Limits{MaxInFlight: o.WebhookMaxInFlight, Metrics: m}))
	if err := mgr.AddReadyzCheck("webhook", mgr.GetWebhookServer().StartedChecker()); err != nil {
		return fmt.Errorf("adding readiness check: %w", err)
	}
	if err := mgr.AddReadyzCheck("caches", cacheSynced(mgr.GetCache())); err != nil {
		return fmt.Errorf("adding readiness check: %w", err)
	}
	// Liveness: this replica's webhook server completes a TLS handshake.
	return addLiveness(mgr)
}

func cacheSynced(c cache.Cache) func(*http.Request) error {
	return func(r *http.Request) error {
		ctx, cancel := context.WithTimeout(r.Context(), time.Second)
		defer cancel()
		if !c.WaitForCacheSync(ctx) {
			return errors.New("caches not synced")
		}
		return nil
	}
}
