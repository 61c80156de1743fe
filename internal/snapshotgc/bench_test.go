package snapshotgc

import (
	"strconv"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/confighash/confighash/hasher"
)

// BenchmarkLookAtAPage is the CPU of one page of a namespace's look: which
// of podPage pods (each reading a ConfigMap whole, a Secret's key and a
// volume) read which of 64 snapshots, then the plan, every pod covered by
// its revision (the steady state: no write).
func BenchmarkLookAtAPage(b *testing.B) {
	snaps := make([]snapshot, 0, 64)
	set := map[hasher.Source]bool{}
	for i := range 64 {
		kind := hasher.ConfigMap
		if i%2 == 1 {
			kind = hasher.Secret
		}
		s := snapshot{Source: hasher.Source{Kind: kind, Name: "src-pin-" + strconv.Itoa(i)}, Owners: []metav1.OwnerReference{{UID: types.UID("rs-" + strconv.Itoa(i/2))}}}
		snaps, set[s.Source] = append(snaps, s), true
	}
	ctl := true
	pods := make([]corev1.Pod, podPage)
	for i := range pods {
		rs := i % 32
		cm, sec := "src-pin-"+strconv.Itoa(2*rs), "src-pin-"+strconv.Itoa(2*rs+1)
		pods[i] = corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p" + strconv.Itoa(i), UID: types.UID("p" + strconv.Itoa(i)),
				OwnerReferences: []metav1.OwnerReference{{UID: types.UID("rs-" + strconv.Itoa(rs)), Controller: &ctl}}},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}},
					Env: []corev1.EnvVar{{Name: "P", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
						LocalObjectReference: corev1.LocalObjectReference{Name: sec}, Key: "k"}}}},
				}},
				Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}}},
			},
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		readers := map[hasher.Source][]reader{}
		for i := range pods {
			readsOf(&pods[i], set, readers)
		}
		if a := plan(snaps, readers, true); len(a) != 0 {
			b.Fatalf("%d writes in the steady state", len(a))
		}
	}
}
