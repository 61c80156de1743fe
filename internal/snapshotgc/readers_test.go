package snapshotgc

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/hasher"
)

// TestReadsOf: a pod reads a snapshot through env, envFrom or a volume;
// naming it the other kind, or being deleted, does not count.
func TestReadsOf(t *testing.T) {
	cm := hasher.Source{Kind: hasher.ConfigMap, Name: "app-pin-1"}
	sec := hasher.Source{Kind: hasher.Secret, Name: "db-pin-1"}
	vol := hasher.Source{Kind: hasher.ConfigMap, Name: "files-pin-1"}
	snaps := map[hasher.Source]bool{cm: true, sec: true, vol: true, {Kind: hasher.Secret, Name: "app-pin-1"}: true}
	ctl := true
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", UID: "pu", OwnerReferences: []metav1.OwnerReference{{UID: "rs", Controller: &ctl}}},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}}}},
			Containers:     []corev1.Container{{Env: []corev1.EnvVar{{Name: "P", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: sec.Name}, Key: "k"}}}}}},
			Volumes:        []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: vol.Name}}}}},
		},
	}
	out := map[hasher.Source][]reader{}
	readsOf(pod, snaps, out)
	if len(out) != 3 {
		t.Fatalf("reads %v", out)
	}
	for _, src := range []hasher.Source{cm, sec, vol} {
		if r := out[src]; len(r) != 1 || r[0] != (reader{Name: "p", UID: "pu", Controller: "rs"}) {
			t.Errorf("%s: readers %v", src, r)
		}
	}
	gone := pod.DeepCopy()
	gone.DeletionTimestamp = &metav1.Time{}
	out = map[hasher.Source][]reader{}
	readsOf(gone, snaps, out)
	if len(out) != 0 {
		t.Errorf("a pod being deleted reads %v", out)
	}
}

// TestRevisionOf names a StatefulSet's and a DaemonSet's pod's
// ControllerRevision as the pinner does.
func TestRevisionOf(t *testing.T) {
	labelled := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"controller-revision-hash": "h"}}}
	for _, tc := range []struct {
		ctl  metav1.OwnerReference
		want string
	}{
		{metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "s"}, "h"},
		{metav1.OwnerReference{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "d"}, "d-h"},
		{metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "r"}, ""},
		{metav1.OwnerReference{APIVersion: "example.com/v1", Kind: "StatefulSet", Name: "s"}, ""},
	} {
		if got := revisionOf(labelled, &tc.ctl); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.ctl.Kind, got, tc.want)
		}
	}
	if got := revisionOf(&corev1.Pod{}, &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet"}); got != "" {
		t.Errorf("unlabelled: %q", got)
	}
}
