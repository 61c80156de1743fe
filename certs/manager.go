package certs

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

var (
	_ manager.Runnable               = (*Manager)(nil)
	_ manager.LeaderElectionRunnable = (*Manager)(nil)
	_ healthz.Checker                = (*Manager)(nil).Ready
)

// Manager keeps the webhook's CA and serving certificate valid in a shared
// Secret, the cert dir and the webhook configuration's caBundle.
type Manager struct {
	client  client.Client
	opts    Options
	spec    issueSpec
	optsErr error // configuration error, returned by every call: retrying cannot fix it

	// Overridable in tests.
	now             func() time.Time
	startupAttempts int           // Ensure attempts in EnsureWithRetry
	startupDelay    time.Duration // first delay between them, doubled each time
	failureDelay    time.Duration // first re-check delay after a failed periodic check

	ensureMu sync.Mutex // serialises Ensure between Start's loop and other callers

	stateMu    sync.RWMutex
	readyUntil time.Time // NotAfter of the certificate in place after the last complete Ensure; zero before
	lastErr    error     // result of the last Ensure
	due        time.Time // next stage of a CA rotation under way (rotationDue); zero if none
}

// New returns a Manager. c must be a live (uncached) client: Secrets and
// MutatingWebhookConfigurations are read directly, without informers. Invalid
// options are reported by every Ensure, EnsureWithRetry and Start call.
func New(c client.Client, opts Options) *Manager {
	opts = opts.withDefaults()
	optsErr := opts.validate()
	if c == nil {
		optsErr = errors.Join(optsErr, errors.New("certs: nil client"))
	}
	return &Manager{
		client:  c,
		opts:    opts,
		optsErr: optsErr,
		spec: issueSpec{
			caCommonName:    opts.FieldOwner + "-webhook-ca",
			dnsNames:        opts.DNSNames,
			ips:             opts.IPAddresses,
			caValidity:      opts.CAValidity,
			certValidity:    opts.CertValidity,
			caRenewBefore:   opts.caRenewBefore(),
			certRenewBefore: opts.certRenewBefore(),
			caPropagation:   opts.CAPropagationDelay,
			caOverlap:       opts.CAOverlap,
		},
		now:             time.Now,
		startupAttempts: 6, // about 30s in total: 1+2+4+8+16
		startupDelay:    time.Second,
		failureDelay:    10 * time.Second,
	}
}

// NeedLeaderElection returns false: every replica serves the webhook, so every
// replica needs the certificate files.
func (m *Manager) NeedLeaderElection() bool { return false }

// Start implements manager.Runnable. It ensures the certificates (returning
// an error if that still fails after a few attempts with backoff, which stops
// the manager), then re-checks every CheckInterval until ctx is done. A failed
// periodic check is logged and retried sooner, with backoff up to
// CheckInterval.
func (m *Manager) Start(ctx context.Context) error {
	if err := m.EnsureWithRetry(ctx); err != nil {
		return err
	}
	logger := log.FromContext(ctx).WithName("certs")

	// Jitter spreads the replicas' checks so they rarely race on the Secret.
	timer := time.NewTimer(m.nextCheckIn())
	defer timer.Stop()
	failDelay := min(m.failureDelay, m.opts.CheckInterval)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		if err := m.Ensure(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			logger.Error(err, "webhook certificate check failed; retrying", "retryIn", failDelay)
			timer.Reset(failDelay)
			failDelay = min(2*failDelay, m.opts.CheckInterval)
			continue
		}
		failDelay = min(m.failureDelay, m.opts.CheckInterval)
		timer.Reset(m.nextCheckIn())
	}
}

// nextCheckIn is the delay to the next periodic check: CheckInterval,
// jittered, or sooner when a stage of a CA rotation falls due.
func (m *Manager) nextCheckIn() time.Duration {
	d := wait.Jitter(m.opts.CheckInterval, 0.1)
	m.stateMu.RLock()
	due := m.due
	m.stateMu.RUnlock()
	if !due.IsZero() {
		// A second late, so the stage is due when the check runs.
		d = min(d, max(due.Sub(m.now())+time.Second, time.Second))
	}
	return d
}

// EnsureWithRetry runs Ensure until it succeeds, giving up after a few
// attempts with exponential backoff (about 30 seconds) or when ctx is done.
// Call it before starting the controller-runtime manager: the webhook server
// starts before other runnables and fails without certificate files.
func (m *Manager) EnsureWithRetry(ctx context.Context) error {
	if m.optsErr != nil {
		return m.optsErr
	}
	logger := log.FromContext(ctx).WithName("certs")
	delay := m.startupDelay
	for attempt := 1; ; attempt++ {
		err := m.Ensure(ctx)
		if err == nil {
			return nil
		}
		if attempt >= m.startupAttempts {
			return fmt.Errorf("ensuring webhook certificates failed after %d attempts: %w", attempt, err)
		}
		logger.Info("ensuring webhook certificates failed; retrying", "attempt", attempt, "retryIn", delay, "error", err.Error())
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("ensuring webhook certificates interrupted: %w; last error: %w", ctx.Err(), err)
		case <-t.C:
		}
		delay *= 2
	}
}

// Ready is a healthz.Checker. It returns nil once an Ensure has completed
// (files written, caBundle injected if configured) and the certificate it put
// in place has not expired. A later failed check does not make it unready:
// the files already written keep being served.
func (m *Manager) Ready(_ *http.Request) error {
	m.stateMu.RLock()
	defer m.stateMu.RUnlock()
	if m.readyUntil.IsZero() {
		if m.lastErr != nil {
			return fmt.Errorf("webhook certificate not ready: %w", m.lastErr)
		}
		if m.optsErr != nil {
			return m.optsErr
		}
		return errors.New("webhook certificate not ready: not ensured yet")
	}
	if !m.now().Before(m.readyUntil) {
		return fmt.Errorf("webhook serving certificate expired at %s", m.readyUntil.UTC().Format(time.RFC3339))
	}
	return nil
}

// Ensure does one pass: load or create the Secret, renew what needs renewing,
// inject the caBundle and write the cert files. It logs through the logger in
// ctx (controller-runtime's log.FromContext).
func (m *Manager) Ensure(ctx context.Context) error {
	if m.optsErr != nil {
		return m.optsErr
	}
	m.ensureMu.Lock()
	defer m.ensureMu.Unlock()

	notAfter, due, err := m.ensure(log.IntoContext(ctx, log.FromContext(ctx).WithName("certs")))

	m.stateMu.Lock()
	defer m.stateMu.Unlock()
	m.lastErr = err
	if err == nil {
		m.readyUntil = notAfter
		m.due = due
	}
	return err
}

// ensure does the work of Ensure and returns the expiry of the serving
// certificate now in place and when a rotation under way is next due.
func (m *Manager) ensure(ctx context.Context) (time.Time, time.Time, error) {
	notAfter, data, err := m.ensureData(ctx)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	return notAfter, rotationDue(data, m.spec, m.now()), nil
}

// ensureData brings Secret, caBundle and files in line and returns the
// serving certificate's expiry and the Secret data.
func (m *Manager) ensureData(ctx context.Context) (time.Time, map[string][]byte, error) {
	logger := log.FromContext(ctx)

	// Read before planning: a CA rotation switches only once the
	// configuration has held the next CA for CAPropagationDelay.
	data, err := m.reconcileSecret(ctx, m.readTrust(ctx))
	if err != nil {
		return time.Time{}, nil, err
	}
	now := m.now()
	bundle, err := caBundle(data, now)
	if err != nil {
		return time.Time{}, nil, fmt.Errorf("building caBundle from secret %s: %w", m.opts.SecretKey, err)
	}
	serving, err := parseCertPEM(data[SecretCertKey])
	if err != nil {
		return time.Time{}, nil, fmt.Errorf("parsing %s of secret %s: %w", SecretCertKey, m.opts.SecretKey, err)
	}

	// Inject (and publish) before writing files: after a CA rotation the new
	// serving certificate is trusted only once the bundle holds the new CA.
	injectErr := errors.Join(m.injectCABundle(ctx, bundle), m.publishCABundle(ctx, bundle))

	if m.opts.CertDir != "" {
		// If injection failed, keep serving the current files when they are
		// still usable, since the apiserver may not trust the new ones yet.
		// Without usable files (first start, expired) write anyway: the
		// webhook server cannot even start without them.
		if injectErr == nil || !servingFilesUsable(m.opts.CertDir, now) {
			changed, err := writeServingFiles(m.opts.CertDir, data[SecretCertKey], data[SecretKeyKey])
			if err != nil {
				return time.Time{}, nil, errors.Join(injectErr, fmt.Errorf("writing serving certificate to %s: %w", m.opts.CertDir, err))
			}
			if changed {
				logger.Info("wrote serving certificate", "dir", m.opts.CertDir, "notAfter", serving.NotAfter)
			}
		}
	}
	if injectErr != nil {
		return time.Time{}, nil, injectErr
	}
	return serving.NotAfter, data, nil
}
