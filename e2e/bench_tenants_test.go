//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/internal/contract"
)

// The shape of a large multi-tenant cluster that Reloader #321 reported,
// spread evenly: 600 namespaces, half of them served, 35 small Secrets and
// 15 Deployments of 0 replicas in each (21,000 and 9,000).
const (
	tenantNamespaces  = 600
	tenantSecrets     = 35
	tenantDeployments = 15
	// tenantWriters create in parallel: 30,000 objects one at a time
	// would take the bench's whole budget.
	tenantWriters = 32
	// tenantWindow is the coalescing window the bench runs with.
	tenantWindow = time.Second
	// tenantChanges is how many Secret changes the re-stamp figure is the
	// median of, each in another served namespace.
	tenantChanges = 5
)

// Issue 26's bars for that cluster.
const (
	tenantRSSAfterRestart = 100.0 // MiB
	tenantReady           = 30 * time.Second
	tenantRestampSlack    = 500 * time.Millisecond // on top of the window
)

// TestBenchTenants measures confighash in that cluster: its RSS once it has
// seen every object created, then after a restart its RSS and its time to
// ready, then how long a change of one Secret takes to re-stamp its reader.
// CONFIGHASH_BENCH_NO_BARS=1 prints the figures without asserting them.
func TestBenchTenants(t *testing.T) {
	benchOnly(t)
	const quiet = 30 * time.Second // as benchRSS: the initial list's garbage returned
	ports, err := controlplane.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	metrics := "127.0.0.1:" + strconv.Itoa(ports[0])
	args := []string{"--coalesce-window=" + tenantWindow.String(), "--metrics-bind-address=" + metrics, "--metrics-secure=false"}
	restartWith(t, args...)
	time.Sleep(quiet)
	base, baseHeap := rssMiB(t), goHeapMiB(t, metrics)

	c := tenantClient(t)
	nss, objs := tenantObjects()
	start := time.Now()
	createConcurrently(t, c, tenantWriters, nss)
	deleteWhenDone(t, c, nss)
	createConcurrently(t, c, tenantWriters, objs[:tenantNamespaces*tenantSecrets])
	createConcurrently(t, c, tenantWriters, objs[tenantNamespaces*tenantSecrets:])
	created := time.Since(start)
	// Measure confighash, not the controller-manager's backlog of a
	// ReplicaSet per Deployment.
	settled := waitReplicaSets(t, c, tenantNamespaces*tenantDeployments)

	// One watch stream carries every Deployment to confighash in the order
	// they were written: once the hook re-stamps a reader created after
	// them all, it has been through every one.
	first := nss[0].GetName()
	marker := deploymentOf(first, "marker", corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
		EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: unreadSecret()}}}}}}})
	marker.Spec.Replicas = ptr.To[int32](0)
	marker.Spec.Selector.MatchLabels = map[string]string{"app": "marker"}
	marker.Spec.Template.Labels = marker.Spec.Selector.MatchLabels
	env.Create(t, marker)
	restamped(t, first, tenantDeployments+1, unreadSecret(), "marker")
	time.Sleep(quiet)
	synced, syncedPeak, syncedHeap := rssMiB(t), peakMiB(t), goHeapMiB(t, metrics)

	ready, cpu := startTimed(t, args...)
	time.Sleep(quiet)
	// RssFile: the binary's own code and read-only data the process has
	// touched, which no cut of the heap moves.
	restarted, restartedPeak, restartedHeap, restartedFile := rssMiB(t), peakMiB(t), goHeapMiB(t, metrics), procStatusMiB(t, "RssFile")
	settledCPU := cpuSeconds(t) - cpu

	var lat []time.Duration
	for i := range tenantChanges {
		// Served namespaces are the even ones; reader d-1 reads s-2 alone.
		ns := nss[2*(i*tenantNamespaces/2/tenantChanges)].GetName()
		lat = append(lat, restamped(t, ns, tenantDeployments, "s-2", "d-1"))
	}
	median := pct(lat, 50)
	changesCPU := cpuSeconds(t) - cpu - settledCPU

	fmt.Printf("\na multi-tenant cluster: %d namespaces (half served), %d Secrets, %d Deployments of 0 replicas (created in %s, ReplicaSets settled after %s)\nmachine: %s\n\n",
		tenantNamespaces, tenantNamespaces*tenantSecrets, tenantNamespaces*tenantDeployments, created.Round(time.Second), settled.Round(time.Second), machine())
	fmt.Printf("| figure | measured | bar |\n|---|---|---|\n")
	fmt.Printf("| RSS 30 s after ready, empty cluster (Go heap) | %.1f MiB (%.1f MiB) | |\n", base, baseHeap)
	fmt.Printf("| RSS 30 s after the last object was seen (peak; Go heap) | %.1f MiB (%.1f MiB; %.1f MiB) | |\n", synced, syncedPeak, syncedHeap)
	fmt.Printf("| RSS 30 s after a restart (peak; Go heap; of it the binary's own pages) | %.1f MiB (%.1f MiB; %.1f MiB; %.1f MiB) | < %.0f MiB |\n",
		restarted, restartedPeak, restartedHeap, restartedFile, tenantRSSAfterRestart)
	fmt.Printf("| restart: start → ready (CPU by then) | %s (%.2f s) | ≤ %s |\n", ready.Round(time.Millisecond), cpu, tenantReady)
	fmt.Printf("| CPU: the %s after ready; the %d changes | %.2f s; %.2f s | |\n", quiet, tenantChanges, settledCPU, changesCPU)
	fmt.Printf("| one Secret changed → its reader re-stamped, window %s, %d changes | median %s, each %v | median ≤ %s |\n",
		tenantWindow, tenantChanges, median, roundAll(lat), tenantWindow+tenantRestampSlack)

	if os.Getenv("CONFIGHASH_BENCH_NO_BARS") != "" {
		return
	}
	if restarted >= tenantRSSAfterRestart {
		t.Errorf("RSS after a restart %.1f MiB, bar %.0f MiB", restarted, tenantRSSAfterRestart)
	}
	if ready > tenantReady {
		t.Errorf("ready after %s, bar %s", ready, tenantReady)
	}
	if median > tenantWindow+tenantRestampSlack {
		t.Errorf("re-stamp median %s, bar %s", median, tenantWindow+tenantRestampSlack)
	}
}

// goHeapMiB is confighash's go_memstats_heap_alloc_bytes from its plain
// HTTP /metrics at addr: the heap's objects, live and not yet collected,
// without the freed pages RSS still counts until the runtime returns them.
func goHeapMiB(t *testing.T, addr string) float64 {
	t.Helper()
	req, err := http.NewRequestWithContext(env.SpecContext(t), http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("reading confighash's metrics: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_alloc_bytes "); ok {
			b, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("go_memstats_heap_alloc_bytes %q: %v", v, err)
			}
			return b / (1 << 20)
		}
	}
	t.Fatalf("no go_memstats_heap_alloc_bytes in confighash's metrics (%v)", sc.Err())
	return 0
}

// tenantObjects builds the cluster: the namespaces, then every Secret,
// then every Deployment (so each is stamped against Secrets that exist),
// each list in namespace-major order. Deployment d-i reads Secret s-2i,
// and the even ones s-2i+1 too; no Secret has two readers.
func tenantObjects() (nss, objs []client.Object) {
	run := rand.Uint32()
	for n := range tenantNamespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("tenant-%d-%d", run, n)}}
		if n%2 == 0 {
			ns.Labels = map[string]string{contract.InjectionLabel: contract.InjectionEnabled}
		}
		nss = append(nss, ns)
	}
	for _, ns := range nss {
		for i := range tenantSecrets {
			objs = append(objs, secret(ns.GetName(), fmt.Sprintf("s-%d", i), map[string]string{"password": fmt.Sprintf("%s-%d", ns.GetName(), i)}))
		}
	}
	for _, ns := range nss {
		for i := range tenantDeployments {
			name := fmt.Sprintf("d-%d", i)
			vars := []corev1.EnvVar{{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: fmt.Sprintf("s-%d", 2*i)}, Key: "password"}}}}
			var from []corev1.EnvFromSource
			if i%2 == 0 {
				from = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: fmt.Sprintf("s-%d", 2*i+1)}}}}
			}
			d := deploymentOf(ns.GetName(), name, corev1.PodSpec{Containers: []corev1.Container{{
				Name: "app", Image: "registry.k8s.io/pause:3.10", Env: vars, EnvFrom: from}}})
			d.Spec.Replicas = ptr.To[int32](0)
			labels := map[string]string{"app": name}
			d.Spec.Selector.MatchLabels, d.Spec.Template.Labels = labels, labels
			objs = append(objs, d)
		}
	}
	return nss, objs
}

// unreadSecret is one of the Secrets no Deployment of tenantObjects reads.
func unreadSecret() string { return fmt.Sprintf("s-%d", tenantSecrets-1) }

// tenantClient is a client without the harness's 200 QPS ceiling, so the
// writers measure the API server, not a client-side throttle.
func tenantClient(t *testing.T) client.Client {
	t.Helper()
	cfg := rest.CopyConfig(env.Config)
	cfg.QPS, cfg.Burst = 2000, 4000
	c, err := client.New(cfg, client.Options{Scheme: env.Client.Scheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// deleteWhenDone deletes the namespaces after the bench and waits until
// they are gone, so the next bench does not run beside the namespace
// controller's work of deleting 30,000 objects.
func deleteWhenDone(t *testing.T, c client.Client, nss []client.Object) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		start := time.Now()
		for _, ns := range nss {
			if err := c.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting namespace %s: %v", ns.GetName(), err)
			}
		}
		for _, ns := range nss {
			err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
				err := c.Get(ctx, client.ObjectKeyFromObject(ns), &corev1.Namespace{})
				return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
			})
			if err != nil {
				t.Errorf("namespace %s not gone after %s: %v", ns.GetName(), time.Since(start).Round(time.Second), err)
				return
			}
		}
		fmt.Printf("(the %d namespaces were deleted in %s)\n", len(nss), time.Since(start).Round(time.Second))
	})
}

// waitReplicaSets waits until the cluster holds at least n ReplicaSets and
// returns how long that took.
func waitReplicaSets(t *testing.T, c client.Client, n int) time.Duration {
	t.Helper()
	start := time.Now()
	var have int
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	err := wait.PollUntilContextCancel(ctx, 5*time.Second, true, func(ctx context.Context) (bool, error) {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "ReplicaSetList"})
		if err := c.List(ctx, l); err != nil {
			return false, err
		}
		have = len(l.Items)
		return have >= n, nil
	})
	if err != nil {
		t.Fatalf("%d ReplicaSets after %s, want %d: %v", have, time.Since(start).Round(time.Second), n, err)
	}
	return time.Since(start)
}

// restamped changes Secret s of namespace ns, which Deployment reader reads,
// and returns the time from the update returning until reader carries a
// new stamp. The namespace holds n Deployments.
func restamped(t *testing.T, ns string, n int, s, reader string) time.Duration {
	t.Helper()
	w := watchStampsOf(t, "deployments", ns, n)
	defer w.stop()
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: s}}
	env.Update(t, sec, func() { sec.Data["password"] = fmt.Appendf(nil, "changed-%d", rand.Uint64()) })
	// From the update's return, as benchLatency's figures.
	start := time.Now()
	timeout := time.After(time.Minute)
	for {
		name, ok := w.changed(timeout)
		if !ok {
			t.Fatalf("%s/%s not re-stamped a minute after %s changed", ns, reader, s)
		}
		if name == reader {
			return time.Since(start)
		}
	}
}
