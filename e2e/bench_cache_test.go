//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/sources"
)

// startTimed restarts confighash with args and returns the time from
// process start to ready and its CPU time by then.
func startTimed(t *testing.T, args ...string) (time.Duration, float64) {
	t.Helper()
	stopConfighash(t)
	start := time.Now()
	if err := env.Confighash.Start(env.SpecContext(t), args...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Confighash.Stop(context.Background()) })
	return time.Since(start), cpuSeconds(t)
}

// listSecrets is the time this process takes to list and sync every
// Secret in the cluster with the Secret cache confighash builds.
func listSecrets(t *testing.T, ignoreHelm bool) (time.Duration, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(env.SpecContext(t))
	defer cancel()
	secrets, elapsed := cachedSecrets(ctx, t, "", ignoreHelm)
	return elapsed, len(secrets)
}

// TestBenchHelmSecrets measures start-up with 2,000 Helm release Secrets of
// 64 KiB each, with the field selector off and on, twice each in turn.
func TestBenchHelmSecrets(t *testing.T) {
	benchOnly(t)
	ns := env.NewNamespace(t, false)
	const releases = 2000
	value := strings.Repeat("h", 64*1024)
	objs := make([]client.Object, releases)
	for i := range objs {
		s := secret(ns, fmt.Sprintf("sh.helm.release.v1.app%d.v1", i), map[string]string{"release": value})
		s.Type = sources.HelmReleaseType
		objs[i] = s
	}
	createConcurrently(t, env.Client, 16, objs)
	fmt.Printf("\nstart-up with %d Helm release Secrets × 64 KiB\nmachine: %s\n\n", releases, machine())
	fmt.Printf("| --ignore-helm-release-secrets | confighash start → ready | confighash CPU at ready | Secret list + sync (this process) | Secrets cached | confighash RSS 20 s after ready |\n|---|---|---|---|---|---|\n")
	for range 2 {
		for _, ignore := range []bool{false, true} {
			ready, cpu := startTimed(t, fmt.Sprintf("--ignore-helm-release-secrets=%t", ignore))
			list, n := listSecrets(t, ignore)
			time.Sleep(20 * time.Second)
			fmt.Printf("| %t | %s | %.2f s | %s | %d | %.1f MiB |\n", ignore, ready.Round(time.Millisecond), cpu, list.Round(time.Millisecond), n, rssMiB(t))
		}
	}
}

// TestBenchCacheMemory measures confighash's RSS per cached object: 10,000
// Secrets and 10,000 ConfigMaps, each one key of 1 KiB, over 100 namespaces.
func TestBenchCacheMemory(t *testing.T) {
	benchOnly(t)
	// Read 30 s after ready, as benchRSS does, so the garbage of the
	// initial list has gone back to the OS.
	const quiet = 30 * time.Second
	startTimed(t)
	time.Sleep(quiet)
	base := rssMiB(t)
	const namespaces, perKind = 100, 100
	value := strings.Repeat("v", 1024)
	var objs []client.Object
	for range namespaces {
		ns := env.NewNamespace(t, false)
		for i := range perKind {
			objs = append(objs,
				configMap(ns, fmt.Sprintf("cm-%d", i), map[string]string{"v": value}),
				secret(ns, fmt.Sprintf("s-%d", i), map[string]string{"v": value}))
		}
	}
	start := time.Now()
	createConcurrently(t, env.Client, 16, objs)
	created := time.Since(start)
	ready, cpu := startTimed(t)
	time.Sleep(quiet)
	after := rssMiB(t)
	perObject := (after - base) * 1024 * 1024 / float64(len(objs))
	fmt.Printf("\ncache memory, %d Secrets + %d ConfigMaps × 1 KiB over %d namespaces (created in %s)\nmachine: %s\n\n",
		namespaces*perKind, namespaces*perKind, namespaces, created.Round(time.Second), machine())
	fmt.Printf("| RSS 30 s after ready, without | with | growth | per cached object | start → ready with them | CPU at ready |\n|---|---|---|---|---|---|\n")
	fmt.Printf("| %.1f MiB | %.1f MiB | %.1f MiB | %.0f bytes | %s | %.2f s |\n", base, after, after-base, perObject, ready.Round(time.Millisecond), cpu)
	heap, n := cacheHeap(t)
	fmt.Printf("\nthe same caches built in this process, live heap after GC: %.1f MiB for %d cached objects, %.0f bytes per object\n", float64(heap)/(1<<20), n, float64(heap)/float64(n))
}

// cacheHeap builds, in this process, the ConfigMap and Secret caches as
// confighash configures them, and returns the live heap they hold after a
// full GC, and how many objects they hold. Unlike RSS it counts neither the
// garbage of the initial list nor what the runtime has yet to return.
func cacheHeap(t *testing.T) (uint64, int) {
	t.Helper()
	ctx, cancel := context.WithCancel(env.SpecContext(t))
	defer cancel()
	live := func() uint64 {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := live()
	c, err := cache.New(env.Config, cache.Options{
		Scheme:           env.Client.Scheme(),
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: {Transform: sources.Slim},
			&corev1.Secret{}:    sources.SecretCache(true),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []client.Object{&corev1.ConfigMap{}, &corev1.Secret{}} {
		if _, err := c.GetInformer(ctx, o); err != nil {
			t.Fatal(err)
		}
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("cache did not sync")
	}
	time.Sleep(2 * time.Second)
	after := live()
	cms, secrets := &corev1.ConfigMapList{}, &corev1.SecretList{}
	if err := c.List(ctx, cms); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, secrets); err != nil {
		t.Fatal(err)
	}
	n := len(cms.Items) + len(secrets.Items)
	cms, secrets = nil, nil
	after = min(after, live())
	runtime.KeepAlive(c)
	return after - before, n
}
