//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/waves"
)

// The hook's figures on the local control plane. They run only under
// `make bench` (CONFIGHASH_BENCH=1): they take minutes and measure rather
// than assert, except for the targets the issues set (and perWave, ours).

func benchOnly(t *testing.T) {
	t.Helper()
	if os.Getenv("CONFIGHASH_BENCH") == "" {
		t.Skip("set CONFIGHASH_BENCH=1 (make bench)")
	}
	if env.ConfighashPID() == 0 {
		t.Skip("needs the local confighash process")
	}
}

func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				model = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d cores, %s/%s, %s", model, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
}

func TestBenchHook(t *testing.T) {
	benchOnly(t)
	fmt.Printf("\nconfighash hook figures on the local control plane\nmachine: %s\n\n", machine())
	fmt.Printf("| figure | measured | target |\n|---|---|---|\n")
	t.Run("latency window 1s", func(t *testing.T) { benchLatency(t, "1s", 20, 0) })
	t.Run("latency window 0", func(t *testing.T) { benchLatency(t, "0s", 20, 0) })
	t.Run("fan-out 200", func(t *testing.T) { benchFanOut(t, idleDeployments(), "all at once", fanOutTarget) })
	t.Run("fan-out 200 in waves", func(t *testing.T) {
		benchFanOut(t, idleDeployments(), "in waves", fanOutTarget, "--max-wave-size=16")
	})
	t.Run("fan-out 200 daemonsets", func(t *testing.T) { benchFanOut(t, nodelessDaemonSets(), "all at once", fanOutTarget) })
	t.Run("fan-out 200 daemonsets in waves", func(t *testing.T) {
		benchFanOut(t, nodelessDaemonSets(), "in waves", fanOutTarget+perWave*time.Duration(len(waves.Sizes(fanOutReaders200, 16))-1),
			"--max-wave-size=16", "--rollout-soak=0s")
	})
	t.Run("bystanders 1000", func(t *testing.T) { benchLatency(t, "0s", 10, 1000) })
	t.Run("rss 2000 secrets", benchRSS)
}

// benchLatency measures ConfigMap patch → new ReplicaSet for n changes,
// with bystanders unrelated Deployments in the same namespace.
func benchLatency(t *testing.T, window string, n, bystanders int) {
	// Twenty changes to one workload in a minute is a flap by default;
	// here it is the experiment.
	restartWith(t, "--coalesce-window="+window, "--flap-limit=1000")
	f := newFixture(t)
	for i := range bystanders {
		d := deploymentOf(f.ns, fmt.Sprintf("bystander-%d", i), corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}}})
		d.Spec.Replicas = ptr.To[int32](0)
		// Own labels: a thousand Deployments sharing one selector would
		// make the controller-manager, not confighash, the thing measured.
		labels := map[string]string{"app": d.Name}
		d.Spec.Selector.MatchLabels, d.Spec.Template.Labels = labels, labels
		env.Create(t, d)
	}
	if bystanders > 0 {
		// Measure confighash, not the controller-manager's backlog: wait
		// until every bystander has its ReplicaSet.
		err := wait.PollUntilContextTimeout(env.SpecContext(t), time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
			l := &appsv1.ReplicaSetList{}
			if err := env.Client.List(ctx, l, client.InNamespace(f.ns)); err != nil {
				return false, err
			}
			return len(l.Items) >= bystanders+1, nil
		})
		if err != nil {
			t.Fatalf("bystanders did not settle: %v", err)
		}
		time.Sleep(settle)
	}
	cpu0 := cpuSeconds(t)
	// Two latencies per change: to the new stamp (confighash's part) and to
	// the new ReplicaSet (what users see, including the controller-manager).
	var stampLat, rsLat []time.Duration
	for i := range n {
		before := len(replicaSetNames(t, f.ns, "app"))
		oldStamp := env.StampOf(t, f.app)
		start := time.Now()
		f.setCM(t, fmt.Sprintf("latency-%d", i))
		var stamped time.Duration
		err := wait.PollUntilContextTimeout(env.SpecContext(t), 10*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			if stamped == 0 && env.StampOf(t, f.app) != oldStamp {
				stamped = time.Since(start)
			}
			return stamped > 0 && len(replicaSetNames(t, f.ns, "app")) > before, nil
		})
		if err != nil {
			t.Fatalf("change %d: no new replicaset", i)
		}
		stampLat, rsLat = append(stampLat, stamped), append(rsLat, time.Since(start))
	}
	cpu := (cpuSeconds(t) - cpu0) / float64(n)
	label := fmt.Sprintf("ConfigMap patch → new stamp / new ReplicaSet, window %s, %d changes", window, n)
	if bystanders > 0 {
		label = fmt.Sprintf("same, window %s, %d unrelated Deployments in the namespace, %d changes", window, bystanders, n)
	}
	fmt.Printf("| %s | stamp p50 %s p99 %s; ReplicaSet p50 %s p99 %s; confighash CPU %.0f ms/change | p50 ≤ window + 0.3 s |\n",
		label, pct(stampLat, 50), pct(stampLat, 99), pct(rsLat, 50), pct(rsLat, 99), cpu*1000)
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)*p/100].Round(time.Millisecond)
}

// fanOutReaders is what the fan-out benchmarks re-stamp.
type fanOutReaders struct {
	what     string // for the figure's line
	resource string // apps/v1 resource
	make     func(ns, name string, spec corev1.PodSpec) client.Object
}

// idleDeployments start no pod (health.NothingToRun), so the hook puts
// them in no wave: with or without waves, one change reaches them all at
// once.
func idleDeployments() fanOutReaders {
	return fanOutReaders{what: "Deployments of 0 replicas", resource: "deployments",
		make: func(ns, name string, spec corev1.PodSpec) client.Object {
			d := deploymentOf(ns, name, spec)
			d.Spec.Replicas = ptr.To[int32](0)
			return d
		}}
}

// nodelessDaemonSets go in the waves, and on a control plane without a node
// schedule no pod: each rollout ends as soon as the DaemonSet controller
// has observed it, so waves of them cost only the hook's round trips.
func nodelessDaemonSets() fanOutReaders {
	return fanOutReaders{what: "DaemonSets (no node)", resource: "daemonsets",
		make: func(ns, name string, spec corev1.PodSpec) client.Object {
			labels := map[string]string{"app": name}
			return &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
				Spec: appsv1.DaemonSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labels},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}}}
		}}
}

const (
	fanOutReaders200 = 200
	// fanOutTarget is the waves issue's bound for one change reaching 200
	// readers that are in no wave (0 replicas), with waves on or off.
	fanOutTarget = 5 * time.Second
	// perWave (our own bound; the issue sets none) is what each wave after
	// the first may add for readers that are in the waves (DaemonSets with
	// no node: 16 waves for 200 at --max-wave-size=16). Waves go in series,
	// each after the previous one's rollouts were observed: a write, the
	// controller's status update, the judge's look; about 0.3 s a wave
	// idle, 0.5 s loaded (waves.md). Before the fix waves.md tells of, lost
	// updates made this case take 11.8 to 19.2 s on a loaded machine.
	perWave = 500 * time.Millisecond
)

// benchFanOut times one change reaching 200 readers: all at once (the
// node-less harness's default, --max-wave-size=0), or in waves (args).
func benchFanOut(t *testing.T, rs fanOutReaders, how string, target time.Duration, args ...string) {
	restartWith(t, args...)
	ns := env.NewNamespace(t, true)
	env.Create(t, configMap(ns, "shared", map[string]string{"k": "1"}))
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "shared"}}}}}}}
	const readers = fanOutReaders200
	var wg sync.WaitGroup
	for i := range readers {
		o := rs.make(ns, fmt.Sprintf("reader-%d", i), spec)
		wg.Go(func() { env.Create(t, o) })
	}
	wg.Wait()
	w := watchStampsOf(t, rs.resource, ns, readers)
	defer w.stop()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shared"}}
	start := time.Now()
	env.Update(t, cm, func() { cm.Data["k"] = "2" })
	done := map[string]bool{}
	timeout := time.After(time.Minute)
	for len(done) < readers {
		name, ok := w.changed(timeout)
		if !ok {
			t.Fatalf("only %d of %d re-stamped after a minute", len(done), readers)
		}
		done[name] = true
	}
	elapsed := time.Since(start)
	fmt.Printf("| one ConfigMap read by %d %s, %s: all re-stamped | %s | ≤ %s |\n", readers, rs.what, how, elapsed.Round(time.Millisecond), target)
	if elapsed > target {
		t.Errorf("fan-out took %s, target %s", elapsed, target)
	}
}

func benchRSS(t *testing.T) {
	// RSS is read 30 s after readiness, so the Go runtime has returned the
	// garbage of the initial list to the OS; the figure is what the cache
	// holds, not the transient decoding of a 128 MiB list.
	const quiet = 30 * time.Second
	restartWith(t)
	time.Sleep(quiet)
	base := rssMiB(t)
	ns := env.NewNamespace(t, true)
	value := strings.Repeat("x", 64*1024)
	const secrets = 2000
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for i := range secrets {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			env.Create(t, secret(ns, fmt.Sprintf("big-%d", i), map[string]string{"v": value}))
		})
	}
	wg.Wait()
	// Restart so the figure is "after sync", not after a stream of events.
	stopConfighash(t)
	startConfighash(t)
	time.Sleep(quiet)
	after := rssMiB(t)
	fmt.Printf("| RSS after sync, %d Secrets × 64 KiB in an enabled namespace vs none | %.1f MiB vs %.1f MiB (+%.1f MiB) | grows by < 20 MiB |\n", secrets, after, base, after-base)
	if after-base >= 20 {
		t.Errorf("RSS grew by %.1f MiB", after-base)
	}
}

// cpuSeconds is confighash's user+system CPU time so far.
func cpuSeconds(t *testing.T) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", env.ConfighashPID()))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name, which is in parentheses.
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	ticks := 100.0
	if out, err := exec.Command("getconf", "CLK_TCK").Output(); err == nil {
		ticks, _ = strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	}
	return (utime + stime) / ticks
}

func rssMiB(t *testing.T) float64 {
	t.Helper()
	return procStatusMiB(t, "VmRSS")
}

// procStatusMiB reads one kB figure of the confighash process's
// /proc/PID/status (VmRSS, VmHWM) in MiB.
func procStatusMiB(t *testing.T, field string) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", env.ConfighashPID()))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field+":") {
			kb, _ := strconv.ParseFloat(strings.Fields(l)[1], 64)
			return kb / 1024
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, env.ConfighashPID())
	return 0
}
