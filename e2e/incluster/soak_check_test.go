//go:build e2e

package incluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
)

// soakSnapshots reads snapshots once per checkpoint: 200 pods share a few
// dozen.
type soakSnapshots struct {
	cs   kubernetes.Interface
	ns   string
	mu   sync.Mutex
	seen map[string]*metav1.ObjectMeta // "configmap/NAME" → its metadata
	data map[string]string             // "configmap/NAME" → its one key's value
}

// get returns the snapshot kind/name, its metadata and the value of its one
// key (mode or token).
func (s *soakSnapshots) get(ctx context.Context, kind, name, key string) (*metav1.ObjectMeta, string, error) {
	id := kind + "/" + name
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.seen[id]; ok {
		return m, s.data[id], nil
	}
	var meta *metav1.ObjectMeta
	var value string
	switch kind {
	case "configmap":
		cm, err := s.cs.CoreV1().ConfigMaps(s.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, "", fmt.Errorf("reading %s: %w", id, err)
		}
		meta, value = &cm.ObjectMeta, cm.Data[key]
		if len(cm.Data) != 1 || cm.Immutable == nil || !*cm.Immutable {
			return nil, "", fmt.Errorf("%s: %d keys, immutable %v; want 1 key, immutable", id, len(cm.Data), cm.Immutable)
		}
	default:
		sec, err := s.cs.CoreV1().Secrets(s.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, "", fmt.Errorf("reading %s: %w", id, err)
		}
		meta, value = &sec.ObjectMeta, string(sec.Data[key])
		if len(sec.Data) != 1 || sec.Type != corev1.SecretTypeOpaque || sec.Immutable == nil || !*sec.Immutable {
			return nil, "", fmt.Errorf("%s: %d keys, type %s, immutable %v; want 1 key, Opaque, immutable", id, len(sec.Data), sec.Type, sec.Immutable)
		}
	}
	s.seen[id], s.data[id] = meta, value
	return meta, value, nil
}

// soakRef is one source a pod reads, as its spec names it after pinning.
type soakRef struct {
	kind, source, key string
	names             []string // every reference of the pod to it: env, volume
	printed           []string // the lines the app prints for it, before the value
}

// refsOf lists what pod p of reader r reads, as its spec names it.
func refsOf(r soakReader, p *corev1.Pod) []soakRef {
	c := p.Spec.Containers[0]
	cm := soakRef{kind: "configmap", source: r.configMap, key: "mode",
		printed: []string{"env:MODE=", "file:/config/mode=", "file:/sub/mode="}}
	sec := soakRef{kind: "secret", source: r.secret, key: "token", printed: []string{"env:TOKEN=", "file:/secret/token="}}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
		case e.ValueFrom.ConfigMapKeyRef != nil:
			cm.names = append(cm.names, e.ValueFrom.ConfigMapKeyRef.Name)
		case e.ValueFrom.SecretKeyRef != nil:
			sec.names = append(sec.names, e.ValueFrom.SecretKeyRef.Name)
		}
	}
	for _, v := range p.Spec.Volumes {
		switch {
		case v.ConfigMap != nil:
			cm.names = append(cm.names, v.ConfigMap.Name)
		case v.Secret != nil:
			sec.names = append(sec.names, v.Secret.SecretName)
		}
	}
	if r.secret == "" {
		return []soakRef{cm}
	}
	return []soakRef{cm, sec}
}

// checkSoakPod checks what pod p of reader r printed, at a settled
// checkpoint where live is every source's content. A pinned pod: every
// reference it has to a source names one snapshot of that source, sealed
// to the pod's stamp (with the stamp's count of snapshots), holding the
// live content, and the pod printed exactly that snapshot's content. A pod
// admitted unpinned (the pin webhook's answer came too late, say) reads the
// sources themselves and must have printed their live content; it is
// reported in unpinned, not as a failure: admitting it unpinned is the
// designed fallback. It returns what is wrong, or "".
func checkSoakPod(ctx context.Context, snaps *soakSnapshots, r soakReader, p *corev1.Pod, live map[string]string) (wrong, unpinned string) {
	refs := refsOf(r, p)
	pinned := p.Annotations[pinning.PodAnnotation] == "true"
	stamp := p.Annotations[contract.ChecksumAnnotation]
	key, err := pinning.StampLabelKey(stamp)
	if err != nil {
		return err.Error(), ""
	}
	var want []string
	for _, ref := range refs {
		if len(ref.names) != 2 || ref.names[0] != ref.names[1] {
			return fmt.Sprintf("reads %s/%s as %v, want one object", ref.kind, ref.source, ref.names), ""
		}
		value := live[ref.source]
		switch {
		case !pinned:
			unpinned = fmt.Sprintf("%s=%q", pinning.PodAnnotation, p.Annotations[pinning.PodAnnotation])
			if ref.names[0] != ref.source {
				return fmt.Sprintf("unpinned, but reads %s/%s as %s", ref.kind, ref.source, ref.names[0]), unpinned
			}
		case !strings.HasPrefix(ref.names[0], ref.source+"-pin-"):
			return fmt.Sprintf("pinned, but reads %s/%s as %s, not a snapshot of it", ref.kind, ref.source, ref.names[0]), ""
		default:
			meta, held, err := snaps.get(ctx, ref.kind, ref.names[0], ref.key)
			if err != nil {
				return err.Error(), ""
			}
			if of := meta.Annotations[pinning.SnapshotOfAnnotation]; of != ref.kind+"/"+ref.source {
				return fmt.Sprintf("%s/%s is a snapshot of %q, want %s/%s", ref.kind, meta.Name, of, ref.kind, ref.source), ""
			}
			if seal, ok := meta.Labels[key]; !ok || !strings.HasPrefix(seal, fmt.Sprintf("%d.", len(refs))) {
				return fmt.Sprintf("%s/%s is not sealed to the pod's stamp %s for %d snapshots (label %s=%q)", ref.kind, meta.Name, stamp, len(refs), key, seal), ""
			}
			if held != value {
				return fmt.Sprintf("%s/%s holds %q, but %s/%s settled on %q", ref.kind, meta.Name, held, ref.kind, ref.source, value), ""
			}
		}
		for _, line := range ref.printed {
			want = append(want, line+value)
		}
	}
	out, err := snaps.cs.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return fmt.Sprintf("reading its log: %v", err), unpinned
	}
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		return fmt.Sprintf("printed %q, want %q (stamp %s, pinned %v)", got, want, stamp, pinned), unpinned
	}
	return "", unpinned
}

// checkSoakPods checks every pod of pods with checkSoakPod, a few at a
// time, and returns one line per pod that fails, and one per pod admitted
// unpinned.
func checkSoakPods(ctx context.Context, cs kubernetes.Interface, readers map[string]soakReader, pods []corev1.Pod, live map[string]string) (failures, unpinned []string) {
	snaps := &soakSnapshots{cs: cs, ns: pods[0].Namespace, seen: map[string]*metav1.ObjectMeta{}, data: map[string]string{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 6)
	for i := range pods {
		p := &pods[i]
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			wrong, unp := checkSoakPod(ctx, snaps, readers[p.Labels["app"]], p, live)
			mu.Lock()
			defer mu.Unlock()
			if wrong != "" {
				failures = append(failures, fmt.Sprintf("pod %s: %s", p.Name, wrong))
			}
			if unp != "" {
				unpinned = append(unpinned, fmt.Sprintf("pod %s: %s", p.Name, unp))
			}
		})
	}
	wg.Wait()
	slices.Sort(failures)
	slices.Sort(unpinned)
	return failures, unpinned
}

// snapshotWaits lists the Events of namespace ns that say a pod waited on
// a snapshot: a Warning whose message names a "-pin-" object (the
// FailedMount of a missing one, or the Failed of a CreateContainerConfigError).
// It lists apart, as lags, each FailedMount of a volume that reads a
// snapshot (volumeOf, from the pods as created) whose message names no
// object: "failed to sync configmap cache", the kubelet's cache of an
// object that exists not synced in time (a missing one is named).
func snapshotWaits(ctx context.Context, cs kubernetes.Interface, ns string, volumeOf func(pod, volume string) string) (waits, lags []string, err error) {
	l, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("listing events in %s: %w", ns, err)
	}
	for _, e := range l.Items {
		if e.Type != corev1.EventTypeWarning {
			continue
		}
		line := fmt.Sprintf("%s %s/%s ×%d: %s", e.Reason, strings.ToLower(e.InvolvedObject.Kind), e.InvolvedObject.Name, e.Count, e.Message)
		if strings.Contains(e.Message, "-pin-") {
			waits = append(waits, line)
			continue
		}
		_, rest, ok := strings.Cut(e.Message, `for volume "`)
		volume, _, _ := strings.Cut(rest, `"`)
		if e.Reason == "FailedMount" && ok && strings.Contains(volumeOf(e.InvolvedObject.Name, volume), "-pin-") {
			lags = append(lags, line+" (volume "+volume+" reads "+volumeOf(e.InvolvedObject.Name, volume)+")")
		}
	}
	return waits, lags, nil
}

// soakPodsReady lists the namespace's pods once want of them are Running
// and Ready and none is terminating; a pod waiting with
// CreateContainerConfigError is an error at once.
func soakPodsReady(ctx context.Context, cs kubernetes.Interface, ns string, want int) ([]corev1.Pod, error) {
	var pods []corev1.Pod
	for {
		l, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, fmt.Errorf("listing pods: %w", err)
		}
		pods = l.Items
		n := 0
		for _, p := range pods {
			for _, s := range p.Status.ContainerStatuses {
				if w := s.State.Waiting; w != nil && w.Reason == "CreateContainerConfigError" {
					return nil, fmt.Errorf("pod %s waits: %s: %s", p.Name, w.Reason, w.Message)
				}
			}
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && ready(p) {
				n++
			}
		}
		if n == want && len(pods) == want {
			return pods, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%d of %d pods Running and Ready (%d pods): %w", n, want, len(pods), ctx.Err())
		case <-time.After(time.Second):
		}
	}
}
