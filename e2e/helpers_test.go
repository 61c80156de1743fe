//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/hashkey"
)

// logPathOf is the file r logs to, "" when it keeps none here (a
// confighash in the cluster).
func logPathOf(r framework.Runner) string {
	if l, ok := r.(interface{ LogPath() string }); ok {
		return l.LogPath()
	}
	return ""
}

// webhookUnreachable points confighash's webhook configuration at an
// address where nothing listens (failurePolicy Ignore then admits
// unstamped) for the rest of t; it skips t where the webhook is reached
// through a Service. The cleanup puts the address back and waits until
// the API server calls the webhook again, for the next spec: until a dry
// run of a reader of ns's cfg and sec is stamped.
func webhookUnreachable(t *testing.T, ns string) {
	t.Helper()
	cfg := &admissionregistrationv1.MutatingWebhookConfiguration{}
	if err := env.Client.Get(env.SpecContext(t), client.ObjectKey{Name: "confighash"}, cfg); err != nil {
		t.Skipf("no webhook configuration to break: %v", err)
	}
	if cfg.Webhooks[0].ClientConfig.URL == nil {
		t.Skip("webhook is reached through a Service here")
	}
	good := *cfg.Webhooks[0].ClientConfig.URL
	setURL := func(u string) {
		env.Update(t, cfg, func() { cfg.Webhooks[0].ClientConfig.URL = &u })
	}
	setURL("https://127.0.0.1:1/mutate")
	t.Cleanup(func() {
		setURL(good)
		_ = wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			d := deploymentOf(ns, "probe", podSpec("cfg", "sec"))
			err := env.Client.Create(ctx, d, client.DryRunAll)
			return err == nil && d.Spec.Template.Annotations[contract.ChecksumAnnotation] != "", nil
		})
	})
}

func configMap(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func secret(ns, name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// podSpec reads configmap cm wholly (envFrom) and key "password" of secret s.
func podSpec(cm, s string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: "registry.k8s.io/pause:3.10",
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}},
		Env: []corev1.EnvVar{{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: s}, Key: "password"}}}},
	}}}
}

func template(spec corev1.PodSpec) corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "e2e"}}, Spec: spec}
}

func deploymentOf(ns, name string, spec corev1.PodSpec) *appsv1.Deployment {
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "e2e"}},
			Template: template(spec),
		},
	}
}

// expectedChecksum computes, with confighash's own key and hasher, what the
// stamp of spec must be given the sources as they are in the cluster now.
func expectedChecksum(t *testing.T, ns string, spec *corev1.PodSpec, annotations map[string]string) string {
	t.Helper()
	ctx := env.SpecContext(t)
	key, err := hashkey.Ensure(ctx, env.Client, types.NamespacedName{Namespace: framework.Namespace, Name: "confighash-hmac-key"})
	if err != nil {
		t.Fatal(err)
	}
	refs, err := hasher.References(spec, annotations)
	if err != nil {
		t.Fatal(err)
	}
	res, err := hasher.Checksum(key, ns, refs, func(s hasher.Source) (hasher.Content, bool, error) {
		var obj client.Object = &corev1.ConfigMap{}
		if s.Kind == hasher.Secret {
			obj = &corev1.Secret{}
		}
		err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: s.Name}, obj)
		if err != nil {
			return hasher.Content{}, false, client.IgnoreNotFound(err)
		}
		switch o := obj.(type) {
		case *corev1.ConfigMap:
			return hasher.ConfigMapContent(o), true, nil
		default:
			return hasher.SecretContent(o.(*corev1.Secret)), true, nil
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.Checksum
}

// dryRunStamp server-side dry-runs a Deployment of spec and returns it with
// the stamp the webhook gave it: the answering replica's cache, read alone
// (a caller's dry-run gets no live reads).
func dryRunStamp(ctx context.Context, ns string, spec corev1.PodSpec) (string, *appsv1.Deployment, error) {
	d := deploymentOf(ns, "dry-run", spec)
	if err := env.Client.Create(ctx, d, client.DryRunAll); err != nil {
		return "", nil, fmt.Errorf("dry-run create of %s/%s: %w", ns, d.Name, err)
	}
	return d.Spec.Template.Annotations[contract.ChecksumAnnotation], d, nil
}

// dryRunUntilCached server-side dry-runs a Deployment of spec until the
// webhook stamps it with the checksum of the sources as they are, and
// returns it. A dry-run reads sources from confighash's cache only (no live
// reads on a caller's dry-run), so right after a ConfigMap or Secret is
// created it may still count it missing; this waits for the cache rather
// than for luck, and fails after 10 s.
func dryRunUntilCached(t *testing.T, ns string, spec corev1.PodSpec) *appsv1.Deployment {
	t.Helper()
	want := expectedChecksum(t, ns, &spec, nil)
	var d *appsv1.Deployment
	var got string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		got, d, err = dryRunStamp(ctx, ns, spec)
		return got == want, err
	})
	if err != nil {
		t.Fatalf("dry-run stamp = %q, want %q: %v", got, want, err)
	}
	return d
}

// replicaSetNames lists the ReplicaSets owned by Deployment name.
func replicaSetNames(t *testing.T, ns, name string) []string {
	t.Helper()
	var out []string
	for _, rs := range env.ReplicaSets(t, ns, name) {
		out = append(out, rs.Name)
	}
	return out
}

// observedReplicaSets waits until the Deployment controller has observed
// Deployment name's latest template (so the ReplicaSet of its last stamp
// exists), then lists its ReplicaSets. A count taken before that misses the
// newest one on a loaded machine.
func observedReplicaSets(t *testing.T, ns, name string) []string {
	t.Helper()
	d := &appsv1.Deployment{}
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := env.Client.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, d); err != nil {
			return false, err
		}
		return d.Status.ObservedGeneration >= d.Generation, nil
	})
	if err != nil {
		t.Fatalf("%s: the Deployment controller has not observed generation %d (observed %d): %v", name, d.Generation, d.Status.ObservedGeneration, err)
	}
	return replicaSetNames(t, ns, name)
}

// settle is longer than the hook's default 1 s coalescing window plus its
// work, so "nothing rolled" is observed, not assumed.
const settle = 4 * time.Second

// expectReplicaSets waits until Deployment name has n ReplicaSets, then
// checks the count holds for the settle time (no second rollout).
func expectReplicaSets(t *testing.T, ns, name string, n int) []string {
	t.Helper()
	ctx := env.SpecContext(t)
	var names []string
	list := func() []string { return replicaSetNames(t, ns, name) }
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		names = list()
		return len(names) >= n, nil
	})
	if err != nil {
		t.Fatalf("%s: want %d replicasets, have %v", name, n, names)
	}
	time.Sleep(settle)
	if names = list(); len(names) != n {
		t.Fatalf("%s: want exactly %d replicasets, have %d: %v", name, n, len(names), names)
	}
	return names
}

func remove(t *testing.T, obj client.Object) {
	t.Helper()
	if err := env.Client.Delete(env.SpecContext(t), obj); err != nil {
		t.Fatalf("deleting %s: %v", obj.GetName(), err)
	}
}

// restartConfighash stops and starts confighash, waiting for readiness.
func restartConfighash(t *testing.T) {
	t.Helper()
	stopConfighash(t)
	startConfighash(t)
}

// restartWith restarts confighash with flags for one spec (the harness's
// own come first, so these override them), and with its defaults after it.
func restartWith(t *testing.T, args ...string) {
	t.Helper()
	stopConfighash(t)
	// CONFIGHASH_BENCH_ARGS adds flags, for experiments with the knobs.
	args = append(args, strings.Fields(os.Getenv("CONFIGHASH_BENCH_ARGS"))...)
	if err := env.Confighash.Start(env.SpecContext(t), args...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = env.Confighash.Stop(context.Background()) })
}

// stopConfighash stops confighash and makes sure it runs again after the
// spec, even a failed one, so later specs do not fail in its wake.
func stopConfighash(t *testing.T) {
	t.Helper()
	if err := env.Confighash.Stop(env.SpecContext(t)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The spec's context is cancelled by the time cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := env.Confighash.Start(ctx); err != nil && !strings.Contains(err.Error(), "already running") {
			t.Errorf("restarting confighash: %v", err)
		}
	})
}

func startConfighash(t *testing.T) {
	t.Helper()
	if err := env.Confighash.Start(env.SpecContext(t)); err != nil {
		t.Fatal(err)
	}
}

// events lists the Events about an object with a reason.
func events(t *testing.T, ns, name, reason string) []corev1.Event {
	t.Helper()
	l := &corev1.EventList{}
	if err := env.Client.List(env.SpecContext(t), l, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range l.Items {
		if e.InvolvedObject.Name == name && e.Reason == reason {
			out = append(out, e)
		}
	}
	return out
}

// eventsAtLeast waits up to 10 s for n events of reason on ns/name (the
// recorder writes them after the change it reports) and returns those
// there are then.
func eventsAtLeast(t *testing.T, ns, name, reason string, n int) []corev1.Event {
	t.Helper()
	var out []corev1.Event
	_ = wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		out = events(t, ns, name, reason)
		return len(out) >= n, nil
	})
	return out
}

// expectRevision waits until Deployment name reaches revision rev, then
// checks it stays there for the settle time. Revisions count rollouts,
// including those back to an earlier ReplicaSet.
func expectRevision(t *testing.T, ns, name string, rev int) {
	t.Helper()
	ctx := env.SpecContext(t)
	revision := func() int {
		d := &appsv1.Deployment{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, d); err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(d.Annotations["deployment.kubernetes.io/revision"])
		return n
	}
	var got int
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		got = revision()
		return got >= rev, nil
	})
	if err != nil {
		t.Fatalf("%s: want revision %d, have %d", name, rev, got)
	}
	time.Sleep(settle)
	if got = revision(); got != rev {
		t.Fatalf("%s: want exactly revision %d, have %d", name, rev, got)
	}
}

// waitStamp waits until obj's pod template carries want. The first re-stamp
// of a custom kind after its CRD appears may wait for the hook's next look
// for it (restamp.ProbeInterval).
func waitStamp(t *testing.T, obj client.Object, want string, within time.Duration) {
	t.Helper()
	var got string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, within, true, func(context.Context) (bool, error) {
		got = env.StampOf(t, obj)
		return got == want, nil
	})
	if err != nil {
		t.Fatalf("%T %s/%s: stamp %q, want %q: %v", obj, obj.GetNamespace(), obj.GetName(), got, want, err)
	}
}

// createConcurrently creates objs with the given number of writers. Errors
// are counted, not fatal: t.Fatal must not be called off the test goroutine.
func createConcurrently(t *testing.T, c client.Client, writers int, objs []client.Object) {
	t.Helper()
	var failed atomic.Int64
	var first atomic.Value
	sem := make(chan struct{}, writers)
	var wg sync.WaitGroup
	for _, o := range objs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := c.Create(ctx, o); err != nil {
				failed.Add(1)
				first.CompareAndSwap(nil, err.Error())
			}
		})
	}
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d of %d creates failed, first: %v", n, len(objs), first.Load())
	}
}

// createAtOnce creates Deployments of spec named prefix0 to prefix(n-1) in
// ns from clients goroutines, and returns how long each create took,
// sorted, and the names whose create was answered without a stamp (the
// answer is what was stored: a stamp missing there is never added later).
func createAtOnce(ctx context.Context, t *testing.T, ns, prefix string, n, clients int, spec corev1.PodSpec) (took []time.Duration, unstamped []string) {
	t.Helper()
	names := make(chan string, n)
	for i := range n {
		names <- fmt.Sprintf("%s%d", prefix, i)
	}
	close(names)
	var mu sync.Mutex
	var creates sync.WaitGroup
	for range clients {
		creates.Go(func() {
			for name := range names {
				d := deploymentOf(ns, name, spec)
				began := time.Now()
				if err := env.Client.Create(ctx, d); err != nil {
					t.Errorf("creating %s: %v", name, err)
					continue
				}
				mu.Lock()
				took = append(took, time.Since(began))
				if d.Spec.Template.Annotations[contract.ChecksumAnnotation] == "" {
					unstamped = append(unstamped, name)
				}
				mu.Unlock()
			}
		})
	}
	creates.Wait()
	slices.Sort(took)
	return took, unstamped
}

// flood creates object(c, i) for i < perClient from each of clients
// goroutines c, as fast as the apiserver takes them, until ctx ends or
// stop is called. stop returns the creates that succeeded, counted by
// outcome of what the apiserver answered, and those that failed.
func flood(ctx context.Context, clients, perClient int, object func(c, i int) client.Object, outcome func(client.Object) string) (stop func() (made map[string]int, failed int)) {
	ctx, cancel := context.WithCancel(ctx)
	var mu sync.Mutex
	made, failed := map[string]int{}, 0
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := 0; i < perClient && ctx.Err() == nil; i++ {
				obj := object(c, i)
				err := env.Client.Create(ctx, obj)
				mu.Lock()
				if err != nil {
					failed++
				} else {
					made[outcome(obj)]++
				}
				mu.Unlock()
			}
		})
	}
	return func() (map[string]int, int) {
		cancel()
		wg.Wait()
		return made, failed
	}
}
