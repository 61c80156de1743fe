package health

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/workload"
)

func TestNothingToRun(t *testing.T) {
	kinds := workload.Kinds()
	kindOf := func(name string) workload.Kind {
		for _, k := range kinds.Mutable() {
			if k.GVK.Kind == name {
				return k
			}
		}
		t.Fatalf("no kind %s", name)
		return workload.Kind{}
	}
	dep := func(mut func(*appsv1.Deployment)) client.Object {
		d := &appsv1.Deployment{}
		mut(d)
		return d
	}
	for name, c := range map[string]struct {
		kind string
		obj  client.Object
		want string
	}{
		"0 replicas":         {"Deployment", dep(func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](0) }), "NoReplicas"},
		"paused":             {"Deployment", dep(func(d *appsv1.Deployment) { d.Spec.Paused = true }), "Paused"},
		"1 replica":          {"Deployment", dep(func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](1) }), ""},
		"replicas unset":     {"Deployment", dep(func(*appsv1.Deployment) {}), ""},
		"cronjob":            {"CronJob", &batchv1.CronJob{}, "CronJob"},
		"ondelete sts":       {"StatefulSet", &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3), UpdateStrategy: appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}}}, "OnDelete"},
		"rolling sts":        {"StatefulSet", &appsv1.StatefulSet{Spec: appsv1.StatefulSetSpec{Replicas: ptr.To[int32](3)}}, ""},
		"ondelete daemonset": {"DaemonSet", &appsv1.DaemonSet{Spec: appsv1.DaemonSetSpec{UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType}}}, "OnDelete"},
		"rolling daemonset":  {"DaemonSet", &appsv1.DaemonSet{}, ""},
	} {
		got, ok := NothingToRun(kindOf(c.kind), c.obj)
		if got != c.want || ok != (c.want != "") {
			t.Errorf("%s: NothingToRun = %q, %v; want %q", name, got, ok, c.want)
		}
		// The typed fast path answers as the unstructured reading does.
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c.obj)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetGroupVersionKind(kindOf(c.kind).GVK)
		if got, ok := NothingToRun(kindOf(c.kind), u); got != c.want || ok != (c.want != "") {
			t.Errorf("%s, unstructured: NothingToRun = %q, %v; want %q", name, got, ok, c.want)
		}
	}
}
