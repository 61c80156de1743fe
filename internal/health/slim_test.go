package health

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestJudgeOnSlimCopies: the hook judges the cache's copy of a workload
// (workload.Kind.SlimObject) with its pods reduced by SlimPod. For every
// judge case of a kind the hook re-stamps, the verdict, the pod selector
// and NothingToRun are those of the whole objects: nothing the judge reads
// is lost to the slimming.
func TestJudgeOnSlimCopies(t *testing.T) {
	for _, c := range judgeCases() {
		if !c.kind.Mutable {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			stamp := c.templateStamp()
			slim := c.kind.SlimObject(c.obj.DeepCopyObject().(client.Object))
			var pods []corev1.Pod
			for i := range c.pods {
				pods = append(pods, SlimPod(&c.pods[i]))
			}
			want := Judge(Input{Kind: c.kind, Object: c.obj, Stamp: stamp, Pods: c.pods, Now: t0(), Soak: soakFor, Since: c.since})
			got := Judge(Input{Kind: c.kind, Object: slim, Stamp: stamp, Pods: pods, Now: t0(), Soak: soakFor, Since: c.since})
			if got != want {
				t.Errorf("on the slim copies: %+v\non the whole objects: %+v", got, want)
			}
			ws, wok, werr := PodSelector(c.kind, c.obj)
			gs, gok, gerr := PodSelector(c.kind, slim)
			if gok != wok || (gerr == nil) != (werr == nil) || (wok && gs.String() != ws.String()) {
				t.Errorf("selector on the slim copy %v %v %v, on the whole %v %v %v", gs, gok, gerr, ws, wok, werr)
			}
			wr, wn := NothingToRun(c.kind, c.obj)
			gr, gn := NothingToRun(c.kind, slim)
			if gr != wr || gn != wn {
				t.Errorf("NothingToRun on the slim copy %q %v, on the whole %q %v", gr, gn, wr, wn)
			}
			wo, go_ := Owned(c.obj, c.pods), Owned(slim, pods)
			if len(wo) != len(go_) {
				t.Errorf("Owned keeps %d slim pods, %d whole ones", len(go_), len(wo))
			}
		})
	}
}

// TestSlimPod: a pod is kept as a few hundred bytes, whatever its spec,
// annotations and messages hold.
func TestSlimPod(t *testing.T) {
	big := strings.Repeat("x", 256<<10)
	p := pod("web-new-a", newStamp, t0(), waiting("CrashLoopBackOff"))
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7b9c", UID: "rs", Controller: ptr.To(true)},
		{APIVersion: "v1", Kind: "ConfigMap", Name: big, UID: "cm"}}
	p.Annotations["junk"] = big
	p.Labels = map[string]string{"app": big}
	p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "A", Value: big}}
	p.Spec.Containers[0].Command = []string{big}
	p.Status.Message = big
	p.Status.ContainerStatuses[0].State.Waiting.Message = big
	s := SlimPod(&p)
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 1<<10 {
		t.Errorf("a slim pod is %d bytes: %s", len(b), b)
	}
	if s.Annotations["confighash.dev/checksum"] != newStamp || !reflect.DeepEqual(s.OwnerReferences, p.OwnerReferences[:1]) {
		t.Errorf("slim pod lost its stamp or controller: %s", b)
	}
}
