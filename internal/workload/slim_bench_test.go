package workload

import (
	"fmt"
	"runtime"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
)

// BenchmarkSlimObject: the time to slim one workload as the cache receives
// it, and the heap its slimmed copy keeps (retained-B/obj, after a GC, over
// 64 copies): for a 1.2 MiB Deployment of bulk, for the worst case
// (references at MaxReferenceBytes, every kept annotation at its bound),
// and for a small Deployment as most clusters hold thousands of; and the
// identity copy (IdentityObject) of a small one and of the bulky one, as
// the cache holds them outside the namespaces served. The small copies
// share their equal parts (sharedValues), as a tenant's do; the worst-case
// copies share nothing (each reads its own ConfigMap, its own selector),
// so that theirs is the bound of one copy.
func BenchmarkSlimObject(b *testing.B) {
	k := kindNamedB(b, "Deployment")
	worst := 0
	unshared := func() client.Object {
		worst++
		d := worstCaseReading(bulky1MiB(), fmt.Sprintf("c%02x", worst%256))
		d.Spec.Selector.MatchLabels["app"] = fmt.Sprint(worst)
		return d
	}
	for name, c := range map[string]struct {
		mk   func() client.Object
		slim func(client.Object) client.Object
	}{
		"bulk-1MiB":          {func() client.Object { return bulky1MiB() }, k.SlimObject},
		"worst":              {unshared, k.SlimObject},
		"small":              {func() client.Object { return smallDeployment() }, k.SlimObject},
		"unserved-small":     {func() client.Object { return smallDeployment() }, k.IdentityObject},
		"unserved-bulk-1MiB": {func() client.Object { return bulky1MiB() }, k.IdentityObject},
	} {
		kept := retained(c.slim, c.mk, 256)
		b.Run(name, func(b *testing.B) {
			obj := c.mk()
			for b.Loop() {
				c.slim(obj)
			}
			b.ReportMetric(kept, "retained-B/obj")
		})
	}
}

// retained is the heap n copies made by slim keep, per copy; their inputs
// are dropped.
func retained(slim func(client.Object) client.Object, mk func() client.Object, n int) float64 {
	kept := make([]client.Object, n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range kept {
		kept[i] = slim(mk())
	}
	// Twice: the first GC only moves sync.Pool's buffers (the JSON
	// encoder's, of the 1 MiB input) to its victim cache.
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}

// smallDeployment is a Deployment reading one Secret by envFrom, stamped and
// rolled out, as the apiserver delivers it: every string its own
// allocation.
func smallDeployment() *appsv1.Deployment {
	s := func(v string) string { return string([]byte(v)) }
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: s("d-1"), Namespace: s("tenant-1234567890-42"),
		UID: types.UID(s("0b7c1d2e-1111-2222-3333-444444444444")), ResourceVersion: s("123456"), Generation: 1,
		Labels:      map[string]string{s("app"): s("d-1")},
		Annotations: map[string]string{s("deployment.kubernetes.io/revision"): s("1")}}}
	d.Spec.Replicas = new(int32)
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{s("app"): s("d-1")}}
	d.Spec.Template.Labels = map[string]string{s("app"): s("d-1")}
	d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: s("v2:0123456789abcdef:00")}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: s("app"), Image: s("registry.k8s.io/pause:3.10"),
		EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: s("s-2")}}}}}}
	for _, c := range [][3]string{{"Available", "True", "MinimumReplicasAvailable"}, {"Progressing", "True", "NewReplicaSetAvailable"}} {
		d.Status.Conditions = append(d.Status.Conditions, appsv1.DeploymentCondition{Type: appsv1.DeploymentConditionType(s(c[0])),
			Status: corev1.ConditionStatus(s(c[1])), Reason: s(c[2]), Message: s("ReplicaSet has successfully progressed.")})
	}
	d.Status.ObservedGeneration = 1
	return d
}

func kindNamedB(b *testing.B, name string) Kind {
	for _, k := range Kinds() {
		if k.GVK.Kind == name {
			return k
		}
	}
	b.Fatalf("no kind %s", name)
	return Kind{}
}
