//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/sources"
)

// helmRelease is a Secret as Helm stores a release revision.
func helmRelease(ns, name string) *corev1.Secret {
	s := secret(ns, name, map[string]string{"release": "H4sIAAAAAAAA/release-record"})
	s.Type = sources.HelmReleaseType
	return s
}

// cachedSecrets are the Secrets in namespace ns ("" for all) that the
// Secret cache confighash builds (sources.SecretCache) holds once synced;
// the cache runs until ctx ends. elapsed is how long it took to sync.
func cachedSecrets(ctx context.Context, t *testing.T, ns string, ignoreHelm bool) (secrets []corev1.Secret, elapsed time.Duration) {
	t.Helper()
	start := time.Now()
	opts := cache.Options{
		Scheme:   env.Client.Scheme(),
		ByObject: map[client.Object]cache.ByObject{&corev1.Secret{}: sources.SecretCache(ignoreHelm)},
	}
	if ns != "" {
		opts.DefaultNamespaces = map[string]cache.Config{ns: {}}
	}
	c, err := cache.New(env.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetInformer(ctx, &corev1.Secret{}); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	elapsed = time.Since(start)
	l := &corev1.SecretList{}
	if err := c.List(ctx, l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return l.Items, elapsed
}

// TestHelmReleaseSecretsNotCached builds the Secret cache confighash builds,
// against the real apiserver, and shows the field selector keeps Helm's
// release Secrets out of it (and, turned off, in). Then it shows that the
// running confighash, which has the selector on, still stamps a template
// reading such a Secret correctly: the webhook's cache miss is confirmed
// with a live read.
func TestHelmReleaseSecretsNotCached(t *testing.T) {
	ctx := env.SpecContext(t)
	ns := env.NewNamespace(t, true)
	env.Create(t, helmRelease(ns, "sh.helm.release.v1.app.v1"))
	env.Create(t, secret(ns, "plain", map[string]string{"password": "p"}))

	for name, tc := range map[string]struct {
		ignore   bool
		wantHelm bool
	}{
		"selector on":  {ignore: true, wantHelm: false},
		"selector off": {ignore: false, wantHelm: true},
	} {
		t.Run(name, func(t *testing.T) {
			secrets, _ := cachedSecrets(ctx, t, ns, tc.ignore)
			got := map[string]bool{}
			for _, s := range secrets {
				got[s.Name] = true
			}
			if !got["plain"] {
				t.Errorf("cached %v: the plain Secret is missing", got)
			}
			if got["sh.helm.release.v1.app.v1"] != tc.wantHelm {
				t.Errorf("cached %v: helm release Secret cached %v, want %v", got, !tc.wantHelm, tc.wantHelm)
			}
		})
	}

	// A pod reading a release Secret: absurd, but the stamp must be right.
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
		Env: []corev1.EnvVar{{Name: "R", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "sh.helm.release.v1.app.v1"}, Key: "release"}}}},
	}}}
	d := deploymentOf(ns, "reads-release", spec)
	env.Create(t, d)
	want := expectedChecksum(t, ns, &d.Spec.Template.Spec, nil)
	if got := env.StampOf(t, d); got != want {
		t.Fatalf("stamp %q, want %q (the release Secret counted as missing?)", got, want)
	}
	// The hook re-checks a new workload; without the Secret in its cache it
	// must keep the stamp (a required source it cannot see), not replace it.
	time.Sleep(3 * time.Second)
	if got := env.StampOf(t, d); got != want {
		t.Errorf("stamp changed to %q after the hook's re-check, want %q", got, want)
	}
}
