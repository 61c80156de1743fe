package app

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
	ctrlwebhook "sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/certs"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/workload"
	"github.com/confighash/confighash/webhook"
)

// Serve runs the webhook (on every replica) and the config-update hook (on
// the leader) until ctx ends.
func Serve(ctx context.Context, o Options) error {
	v, err := o.validate()
	if err != nil {
		return usageError{err}
	}
	ep, kinds := v.endpoint, v.kinds
	// Before anything is written: an unreadable CA bundle stops us here.
	auth, err := loadClientAuth(o)
	if err != nil {
		return err
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

	// Each part registers its series, once, on the registry the manager's
	// metrics server serves. The webhook's are made first: its server
	// counts the connections it refuses.
	reg := metrics.Registry
	if err := registerBuildInfo(reg, Version()); err != nil {
		return err
	}
	wm, err := webhook.NewMetrics(reg)
	if err != nil {
		return err
	}
	// The metrics serve the certificate files now in --cert-dir.
	metricsCert, err := metricsCertWatcher(o)
	if err != nil {
		return err
	}
	sc := newSourceCache(ctx, o)
	wc := &workloadCache{kinds: kinds}
	mgr, err := newManager(cfg, scheme, o, kinds, ep, wm, metricsCert, auth, sc, wc)
	if err != nil {
		return err
	}
	if err := sc.start(ctx, mgr); err != nil {
		return err
	}
	if err := wc.start(mgr, sc); err != nil {
		return err
	}
	if metricsCert != nil {
		if err := mgr.Add(everyReplica{metricsCert}); err != nil {
			return fmt.Errorf("adding the metrics certificate watcher: %w", err)
		}
	}
	if certManager != nil {
		if err := certs.NewMetrics(reg, certManager); err != nil {
			return err
		}
		if err := mgr.Add(certManager); err != nil {
			return fmt.Errorf("adding certificate manager: %w", err)
		}
		if err := mgr.AddReadyzCheck("certificate", certManager.Ready); err != nil {
			return fmt.Errorf("adding readiness check: %w", err)
		}
	}
	if err := addWebhook(ctx, mgr, wm, key, o.policy(), kinds, o, auth.webhookCallers(), sc); err != nil {
		return err
	}
	hookMgr := watchIndexes(mgr, kinds)
	if err := addHook(ctx, hookMgr, reg, key, kinds, probe, o); err != nil {
		return err
	}
	if err := publishSettings(mgr, live, o); err != nil {
		return err
	}
	if err := addStartupFree(mgr, hookMgr); err != nil {
		return fmt.Errorf("adding the start-up heap release: %w", err)
	}
	if err := addKeyKeeper(mgr, reg, live, keyRef, key, o.LeaderElect); err != nil {
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

func newManager(cfg *rest.Config, scheme *runtime.Scheme, o Options, kinds workload.Registry, ep *webhookEndpoint, wm *webhook.Metrics, metricsCert *certwatcher.CertWatcher, auth *clientAuth, sc *sourceCache, wc *workloadCache) (manager.Manager, error) {
	server := ctrlwebhook.Options{Host: o.WebhookHost, Port: o.WebhookPort, CertDir: o.CertDir, TLSOpts: auth.tlsOpts()}
	if ep != nil {
		server.Host, server.Port = ep.host, ep.port
	}
	mgr, err := ctrl.NewManager(cfg, manager.Options{
		Scheme:                  scheme,
		Metrics:                 metricsOptions(o, metricsCert),
		HealthProbeBindAddress:  o.HealthAddr,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        leaderElectionID,
		LeaderElectionNamespace: o.Namespace,
		// Release the lease on a clean stop so a new leader takes over at
		// once during a rolling upgrade.
		LeaderElectionReleaseOnCancel: true,
		// controller-runtime's server, with connections bounded per
		// source address (see webhook.Server).
		WebhookServer: webhook.NewServer(server, o.Webhook, wm),
		Cache: cache.Options{
			DefaultNamespaces: cacheNamespaces(o.Namespaces),
			// Workloads are cached as the hook's slim copies
			// (workload.SlimObject), bounded per object whatever tenants
			// put in them, and as their identity alone outside the
			// namespaces served; everything else without its managedFields.
			DefaultTransform: kinds.Transform(sc.serves, cache.TransformStripManagedFields()),
			ByObject:         sc.byObject(o.IgnoreHelmReleaseSecrets),
		},
		NewCache:  wc.newCache,
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
		CABundleConfigMap: o.CABundleConfigMap,
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
func addWebhook(ctx context.Context, mgr manager.Manager, m *webhook.Metrics, key []byte, policy injection.Policy, kinds workload.Registry, o Options, callers *webhook.Callers, sc *sourceCache) error {
	// Start the config informers now, so readiness covers their sync and
	// the first admission request finds them warm.
	// Namespaces too: the handler applies the injection policy to every
	// request from the cached Namespace.
	for _, obj := range []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Namespace{}} {
		if _, err := mgr.GetCache().GetInformer(ctx, obj); err != nil {
			return fmt.Errorf("starting informer for %T: %w", obj, err)
		}
	}
	// Cache misses, and placeholders not filled yet, are read live,
	// within a per-request budget and a short memory of confirmed misses
	// (see sources.Reader). What a live GET finds, source or namespace,
	// present or absent, is remembered as briefly (see
	// sources.RecentReads), so that callers naming what the cache lacks
	// cost one GET per name and TTL, not one per request; a fresh read
	// takes only what was read after its admission began.
	// Versions' LISTs are read as they arrive, through the manager's
	// connections (sources.RESTPages).
	fresh, err := admissionClient(mgr)
	if err != nil {
		return fmt.Errorf("creating the webhook's client for fresh reads: %w", err)
	}
	pages, err := sources.NewRESTPages(admissionConfig(mgr), mgr.GetHTTPClient())
	if err != nil {
		return err
	}
	recent := sources.NewRecentReads(fresh, sources.DefaultMissTTL, sources.DefaultRecentWeight, nil)
	recent.Slimmer = sources.Slimmer{MaxKeys: o.MaxSourceKeys}
	reader := sources.Reader{
		Cache:         sc.reader(mgr),
		Live:          recent,
		LivePerLookup: o.LiveReadsPerRequest,
		MaxKeys:       o.MaxSourceKeys,
		Misses:        sources.NewMisses(sources.DefaultMissTTL, sources.DefaultMissEntries, nil),
		// A new or changed template's sources are read fresh (PreferLive);
		// one metadata LIST of the namespace's sources of a kind, shared
		// by the admissions under way, tells which the cache already holds
		// as the apiserver does, so that those cost no GET each
		// (sources.Versions).
		Versions: sources.NewVersions(pages, sources.DefaultMissTTL, sources.DefaultRecentWeight, nil),
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
		Namespaces: injection.CacheThenLive{Cache: mgr.GetCache(), Live: recent},
		Callers:    callers,
	}
	mgr.GetWebhookServer().Register(webhook.Path, callers.Endpoint(h, o.Webhook.Limits(m)))
	if o.Pinning {
		if err := addPinning(mgr, key, policy, o, callers, h, m); err != nil {
			return err
		}
	}
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

// admissionConfig is the manager's config without a client-side rate
// limit, for what the webhooks read while they answer. The endpoints'
// in-flight bound limits those reads (--webhook-max-in-flight requests,
// each reading a bounded number of objects). A token bucket shared by
// every namespace would let one namespace's burst of writes queue every
// other namespace's admissions past the slot wait, to be admitted
// unstamped or unpinned.
func admissionConfig(mgr manager.Manager) *rest.Config {
	c := rest.CopyConfig(mgr.GetConfig())
	c.QPS = -1
	return c
}

// admissionClient is a live client on admissionConfig.
func admissionClient(mgr manager.Manager) (client.Client, error) {
	return client.New(admissionConfig(mgr), client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper(), HTTPClient: mgr.GetHTTPClient()})
}
