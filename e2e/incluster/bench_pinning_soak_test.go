//go:build e2e

package incluster

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
)

// soakChanges is how many config changes the soak makes, one every
// soakGap, round-robin over the sources.
const (
	soakChanges = 30
	soakGap     = 6 * time.Second
	// soakQuiet is how long every workload must stay rolled out with the
	// same stamps for the soak to call it settled: longer than a wave's
	// soak (10 s) and the hook's coalescing.
	soakQuiet = 25 * time.Second
)

// TestBenchPinningSoak (CONFIGHASH_BENCH=1, make bench; the node runs with
// maxPods 250): 20 workloads in a pinning namespace (18 Deployments, 2
// StatefulSets) read 10 ConfigMaps and 2 Opaque Secrets, shared by two
// workloads each, through env, a mounted file and a subPath file (waves
// off). 30 config changes, one every 6 s, with pods deleted and workloads
// scaled up from 8 to 10 pods in between, to 200 pods. After the start and every 10 changes,
// once settled, every pod must have printed exactly the content of the
// snapshots sealed to its stamp, which is then the sources' live content;
// and no Warning Event in the namespace may name a snapshot (FailedMount,
// or the Failed of a CreateContainerConfigError). A pod admitted unpinned
// (on this 2-core machine, a revision's first pod whose snapshot writes
// outlast the pin webhook's 5 s timeout) must have printed the live content,
// and is counted, not failed: that is the designed fallback; a workload
// none of whose pods is pinned fails.
func TestBenchPinningSoak(t *testing.T) {
	if os.Getenv("CONFIGHASH_BENCH") == "" {
		t.Skip("a soak, not a check of every run: set CONFIGHASH_BENCH=1 (make bench)")
	}
	begin := time.Now()
	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ns := pinningNamespace(t)
	tally := startSoakTally(t, cs, ns)

	sources := soakSources(ns)
	live := map[string]string{}
	for _, s := range sources {
		env.Create(t, s)
		live[s.GetName()] = soakValue(s.GetName(), 0)
	}
	readers := map[string]soakReader{}
	var workloads []client.Object
	for _, r := range soakReaders() {
		readers[r.name] = r
		o := r.object(ns)
		env.Create(t, o)
		workloads = append(workloads, o)
	}
	pods := soakWorkloads * soakStartPods
	unpinned, lags := soakCheckpoint(t, cs, tally, ns, readers, workloads, pods, live, "start")

	for k := 1; k <= soakChanges; k++ {
		src := sources[(k-1)%len(sources)]
		live[src.GetName()] = soakValue(src.GetName(), k)
		env.Update(t, src, func() {
			switch s := src.(type) {
			case *corev1.ConfigMap:
				s.Data["mode"] = live[s.Name]
			case *corev1.Secret:
				s.Data["token"] = []byte(live[s.Name])
			}
		})
		if k%3 == 2 {
			deleteSoakPods(t, cs, ns, fmt.Sprintf("w-%02d", (k*7)%soakWorkloads), 2)
		}
		if k == 5 || k == 15 {
			// Half of the workloads grow: 0-9, then 10-19.
			for _, o := range workloads[k/10*10 : k/10*10+10] {
				scaleSoakWorkload(t, o, soakFinalPods)
				pods += soakFinalPods - soakStartPods
			}
		}
		time.Sleep(soakGap)
		if k%10 == 0 || k == soakChanges {
			unpinned, lags = soakCheckpoint(t, cs, tally, ns, readers, workloads, pods, live, fmt.Sprintf("change %d", k))
		}
	}
	took := time.Since(begin)
	tally.stop()
	fmt.Printf("\n| pinning soak on the node | figure |\n|---|---|\n")
	fmt.Printf("| workloads (Deployments + StatefulSets) | %d + %d |\n", soakWorkloads-soakStatefulSets, soakStatefulSets)
	fmt.Printf("| sources (ConfigMaps + Opaque Secrets) | %d + %d |\n", soakConfigMaps, soakSecrets)
	fmt.Printf("| config changes | %d |\n", soakChanges)
	fmt.Printf("| pods at the end / created in all | %d / %d |\n", pods, tally.pods.Load())
	fmt.Printf("| snapshots created (ConfigMaps + Secrets) | %d + %d |\n", tally.cmSnapshots.Load(), tally.secretSnapshots.Load())
	fmt.Printf("| pods at the end admitted unpinned (they read the live sources; PodUnpinned Events) | %d |\n", unpinned)
	fmt.Printf("| pods that printed other content than their stamp's | 0 |\n")
	fmt.Printf("| Warning Events naming a snapshot (a pod waited on a missing one) | 0 |\n")
	fmt.Printf("| FailedMount Events of a snapshot volume naming no object (the kubelet's cache of it slow to sync) | %d |\n", lags)
	fmt.Printf("| peak confighash RSS (each replica, cgroup) | %.1f MiB |\n", float64(tally.peakRSS.Load())/(1<<20))
	fmt.Printf("| total duration | %s |\n", took.Round(time.Second))
}

// soakCheckpoint waits until every workload has rolled out and kept its
// stamp for soakQuiet, and the namespace has exactly pods pods, all Ready;
// then checks each pod (checkSoakPods, against the live content) and the
// namespace's Events (snapshotWaits), and fails the spec on any finding.
// It returns how many of the pods were admitted unpinned, and how many
// Events say the kubelet was slow to mount a snapshot.
func soakCheckpoint(t *testing.T, cs kubernetes.Interface, tally *soakTally, ns string, readers map[string]soakReader, workloads []client.Object, pods int, live map[string]string, at string) (unpinned, lags int) {
	t.Helper()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := soakSettle(ctx, workloads); err != nil {
		t.Fatalf("%s: not settled: %v", at, err)
	}
	list, err := soakPodsReady(ctx, cs, ns, pods)
	if err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	failures, loose := checkSoakPods(ctx, cs, readers, list, live)
	waits, slow, err := snapshotWaits(ctx, cs, ns, tally.volumeOf)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range slow {
		t.Logf("%s: the kubelet was slow to mount a snapshot: %s", at, l)
	}
	for _, f := range failures {
		t.Errorf("%s: %s", at, f)
	}
	// A pod admitted unpinned is the fallback for a slow answer; a
	// workload with no pod pinned is pinning not in effect.
	pinned := map[string]int{}
	for _, p := range list {
		if p.Annotations[pinning.PodAnnotation] == "true" {
			pinned[p.Labels["app"]]++
		}
	}
	for name := range readers {
		if pinned[name] == 0 {
			t.Errorf("%s: no pod of %s is pinned", at, name)
		}
	}
	for _, w := range waits {
		t.Errorf("%s: a pod waited on a snapshot: %s", at, w)
	}
	if t.Failed() {
		t.FailNow()
	}
	for _, u := range loose {
		t.Logf("%s: admitted unpinned: %s", at, u)
	}
	t.Logf("%s: %d pods (%d of them unpinned) printed their stamp's content, from its snapshots, the live content; no Event names a snapshot (settled and checked in %s)",
		at, len(list), len(loose), time.Since(start).Round(time.Second))
	return len(loose), len(slow)
}

// soakSettle waits until every workload is rolled out and no stamp changed
// for soakQuiet.
func soakSettle(ctx context.Context, workloads []client.Object) error {
	var last string
	var since time.Time
	for {
		stamps, busy := make([]string, 0, len(workloads)), 0
		for _, o := range workloads {
			switch w := o.DeepCopyObject().(type) {
			case *appsv1.Deployment:
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
					return err
				}
				stamps = append(stamps, w.Spec.Template.Annotations[contract.ChecksumAnnotation])
				if rolling(w) {
					busy++
				}
			case *appsv1.StatefulSet:
				if err := env.Client.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
					return err
				}
				stamps = append(stamps, w.Spec.Template.Annotations[contract.ChecksumAnnotation])
				s := w.Status
				if s.ObservedGeneration < w.Generation || s.UpdateRevision != s.CurrentRevision || s.ReadyReplicas != *w.Spec.Replicas || s.Replicas != *w.Spec.Replicas {
					busy++
				}
			}
		}
		now := strings.Join(stamps, ",")
		if busy > 0 || now != last {
			last, since = now, time.Now()
		} else if time.Since(since) >= soakQuiet {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d workloads still rolling: %w", busy, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// deleteSoakPods deletes n running pods of workload name.
func deleteSoakPods(t *testing.T, cs kubernetes.Interface, ns, name string, n int) {
	t.Helper()
	ctx := env.SpecContext(t)
	l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range l.Items {
		if n == 0 {
			return
		}
		if p.DeletionTimestamp != nil {
			continue
		}
		if err := cs.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		n--
	}
}

// scaleSoakWorkload sets a workload's replicas.
func scaleSoakWorkload(t *testing.T, o client.Object, replicas int32) {
	t.Helper()
	env.Update(t, o, func() {
		switch w := o.(type) {
		case *appsv1.Deployment:
			w.Spec.Replicas = ptr.To(replicas)
		case *appsv1.StatefulSet:
			w.Spec.Replicas = ptr.To(replicas)
		}
	})
}

// soakTally counts, while the soak runs, the pods and snapshots created in
// its namespace (from watches, so that none is missed between polls) and
// samples confighash's resident memory every 5 s.
type soakTally struct {
	pods, cmSnapshots, secretSnapshots atomic.Int64
	peakRSS                            atomic.Uint64
	// volumes is, for each pod created, what each volume reads: the
	// Events of a pod outlive it.
	volumes sync.Map // pod name → map[volume]object name
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// volumeOf is the object the volume of pod reads, as created; "" if unknown.
func (s *soakTally) volumeOf(pod, volume string) string {
	v, ok := s.volumes.Load(pod)
	if !ok {
		return ""
	}
	return v.(map[string]string)[volume]
}

// record keeps what the volumes of a pod just created read.
func (s *soakTally) record(p *corev1.Pod) {
	vols := map[string]string{}
	for _, v := range p.Spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			vols[v.Name] = v.ConfigMap.Name
		case v.Secret != nil:
			vols[v.Name] = v.Secret.SecretName
		}
	}
	s.volumes.Store(p.Name, vols)
}

func startSoakTally(t *testing.T, cs kubernetes.Interface, ns string) *soakTally {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &soakTally{cancel: cancel}
	t.Cleanup(s.stop)
	snap := metav1.ListOptions{LabelSelector: pinning.SnapshotLabel + "=true"}
	watches := []struct {
		n  *atomic.Int64
		rv func() (string, error)
		w  cache.WatchFuncWithContext
	}{
		{&s.pods, func() (string, error) {
			l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			return rvOf(l, err)
		}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			return cs.CoreV1().Pods(ns).Watch(ctx, o)
		}},
		{&s.cmSnapshots, func() (string, error) {
			l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, snap)
			return rvOf(l, err)
		}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = snap.LabelSelector
			return cs.CoreV1().ConfigMaps(ns).Watch(ctx, o)
		}},
		{&s.secretSnapshots, func() (string, error) {
			l, err := cs.CoreV1().Secrets(ns).List(ctx, snap)
			return rvOf(l, err)
		}, func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.LabelSelector = snap.LabelSelector
			return cs.CoreV1().Secrets(ns).Watch(ctx, o)
		}},
	}
	for _, w := range watches {
		rv, err := w.rv()
		if err != nil {
			t.Fatal(err)
		}
		rw, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{WatchFuncWithContext: w.w})
		if err != nil {
			t.Fatal(err)
		}
		s.wg.Go(func() {
			defer rw.Stop()
			for ev := range rw.ResultChan() {
				if ev.Type != watch.Added {
					continue
				}
				w.n.Add(1)
				if p, ok := ev.Object.(*corev1.Pod); ok {
					s.record(p)
				}
			}
		})
	}
	s.wg.Go(func() {
		for {
			l := &corev1.PodList{}
			if err := env.Client.List(ctx, l, client.InNamespace(framework.Namespace), client.MatchingLabels{"app.kubernetes.io/name": "confighash"}); err != nil {
				l.Items = nil
			}
			for _, p := range l.Items {
				for _, c := range p.Status.ContainerStatuses {
					if rss, err := env.ControlPlane.ContainerRSS(ctx, c.ContainerID); err == nil && rss > s.peakRSS.Load() {
						s.peakRSS.Store(rss)
					}
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Second):
			}
		}
	})
	return s
}

// stop ends the watches and the sampling, and waits for them.
func (s *soakTally) stop() {
	s.cancel()
	s.wg.Wait()
}

// rvOf is a list's resourceVersion, to watch from.
func rvOf(l interface{ GetResourceVersion() string }, err error) (string, error) {
	if err != nil {
		return "", fmt.Errorf("listing to watch from: %w", err)
	}
	return l.GetResourceVersion(), nil
}
