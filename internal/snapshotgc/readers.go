package snapshotgc

import (
	"context"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
)

// podPage and maxPodPages bound one look at a namespace's pods. A pod's
// spec is what names the snapshots it reads, so pods are read whole, a page
// at a time, and only who reads what is kept. Past the last page the look
// is incomplete: owners are still added for the pods seen, but nothing is
// deleted.
const (
	podPage     = 250
	maxPodPages = 40
)

// readers pages through namespace's pods and returns, for each snapshot in
// snaps, the pods that read it, and whether every pod was looked at. A pod
// being deleted is not a reader: its containers are not started again.
func (c *Controller) readers(ctx context.Context, namespace string, snaps map[hasher.Source]bool) (map[hasher.Source][]reader, bool, error) {
	out := map[hasher.Source][]reader{}
	cont := ""
	for range maxPodPages {
		l := &corev1.PodList{}
		opts := []client.ListOption{client.InNamespace(namespace), client.Limit(podPage)}
		if cont != "" {
			opts = append(opts, client.Continue(cont))
		}
		if err := c.cfg.Client.List(ctx, l, opts...); err != nil {
			return nil, false, fmt.Errorf("listing the pods of %s: %w", namespace, err)
		}
		for i := range l.Items {
			readsOf(&l.Items[i], snaps, out)
		}
		if cont = l.Continue; cont == "" {
			return out, true, nil
		}
	}
	return out, false, nil
}

// readsOf adds pod to out under each snapshot of snaps it reads: the reads
// the pinner rewrites, as hasher.References finds them in a pod spec.
func readsOf(pod *corev1.Pod, snaps map[hasher.Source]bool, out map[hasher.Source][]reader) {
	if pod.DeletionTimestamp != nil {
		return
	}
	refs, _ := hasher.References(&pod.Spec, nil) // no annotations, no error
	var r *reader
	for _, ref := range refs {
		if !snaps[ref.Source] {
			continue
		}
		if r == nil {
			r = &reader{Name: pod.Name, UID: pod.UID}
			if ctl := metav1.GetControllerOf(pod); ctl != nil {
				r.Controller, r.Revision = ctl.UID, revisionOf(pod, ctl)
			}
		}
		out[ref.Source] = append(out[ref.Source], *r)
	}
}

// revisionOf is the name of the ControllerRevision a StatefulSet's or
// DaemonSet's pod was made from, as the pinner finds it (internal/pinner,
// revision.go): a StatefulSet labels its pods with the revision's name, a
// DaemonSet with its hash. "" for other pods.
func revisionOf(pod *corev1.Pod, ctl *metav1.OwnerReference) string {
	hash := pod.Labels[appsv1.ControllerRevisionHashLabelKey]
	if hash == "" || ctl.APIVersion != "apps/v1" {
		return ""
	}
	switch ctl.Kind {
	case "StatefulSet":
		return hash
	case "DaemonSet":
		return ctl.Name + "-" + hash
	}
	return ""
}
