package deploy

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// startupBudgetSeconds is how long start-up may take before the kubelet
// restarts the container: the HMAC key read retries for about 30 s
// (cmd/confighash/app keyReadBackoff), the certificate for about 31 s
// (certs.Manager.EnsureWithRetry), then the caches sync.
const startupBudgetSeconds = 120

// TestProbes checks the probes against what the binary serves on them:
// /healthz is the liveness check (a TLS handshake with the replica's own
// webhook server), so a startupProbe on it must hold liveness off while
// start-up retries, and the liveness probe needs no initial delay of its
// own but enough time for the check's 3 s handshake timeout.
func TestProbes(t *testing.T) {
	for _, r := range decodedRenders(t) {
		t.Run(r.Name, func(t *testing.T) {
			c := r.Container
			health := portOfAddr(t, r, "health-probe-bind-address", need(t, r, flagsOf(t, r), "health-probe-bind-address"))
			for name, p := range map[string]*corev1.Probe{"startupProbe": c.StartupProbe, "livenessProbe": c.LivenessProbe} {
				if p == nil || p.HTTPGet == nil {
					t.Errorf("no HTTP %s", name)
					continue
				}
				if p.HTTPGet.Path != "/healthz" {
					t.Errorf("%s on %s, want /healthz", name, p.HTTPGet.Path)
				}
				if got, ok := containerPort(c, p.HTTPGet.Port); !ok || got != health {
					t.Errorf("%s on port %s, but --health-probe-bind-address serves %d", name, p.HTTPGet.Port.String(), health)
				}
			}
			if s := c.StartupProbe; s != nil {
				if budget := s.PeriodSeconds * s.FailureThreshold; budget < startupBudgetSeconds {
					t.Errorf("startupProbe allows %d s, want at least %d s for the start-up retries", budget, startupBudgetSeconds)
				}
			}
			if l := c.LivenessProbe; l != nil {
				if l.InitialDelaySeconds != 0 {
					t.Errorf("livenessProbe waits %d s; the startupProbe holds it off already", l.InitialDelaySeconds)
				}
				if l.TimeoutSeconds < 5 {
					t.Errorf("livenessProbe timeoutSeconds %d, want at least 5: the check itself may take 3 s", l.TimeoutSeconds)
				}
			}
		})
	}
}
