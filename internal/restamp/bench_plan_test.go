package restamp

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/workload"
)

// BenchmarkPlanChange measures planning one change of configmap/app read by
// n one-replica Deployments, all stale: the work a tenant's readers cost the
// reconcile that first meets the change. checksums/op counts the reads of
// the ConfigMap that planning makes; each reader reads only it, so it is one
// read per checksum (a full one or a content ID).
func BenchmarkPlanChange(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("readers=%d", n), func(b *testing.B) {
			var reads atomic.Int64
			r, c := planBenchReconciler(b, n, &reads)
			ctx := context.Background()
			reads.Store(0)
			b.ResetTimer()
			for range b.N {
				r.planner = newPlanner(16, 10, nil)
				if _, err := r.buildPlan(ctx, planKey{namespace: "ns", source: c.Source}, c); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(reads.Load())/float64(b.N), "checksums/op")
		})
	}
}

// planBenchReconciler builds n stale readers of configmap/app, counting
// every read of a ConfigMap in reads, and returns the change to plan.
func planBenchReconciler(b testing.TB, n int, reads *atomic.Int64) (*reconciler, contract.Change) {
	b.Helper()
	old := wantSum(b, map[string]string{"k": "v1"})
	cm := slimCM(b, "ns", "app", map[string]string{"k": "v2"})
	objs := []client.Object{cm}
	for i := range n {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("d%04d", i), Namespace: "ns", Generation: 1}}
		d.Spec.Replicas = ptr.To(int32(1))
		d.Spec.Template.Spec = envFromCM("app")
		d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: old}
		objs = append(objs, d)
	}
	c := withReadersIndex(fake.NewClientBuilder()).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.ConfigMap); ok {
				reads.Add(1)
			}
			return c.Get(ctx, key, obj, opts...)
		},
	}).Build()
	m, err := NewMetrics(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	r := &reconciler{client: c, readers: c, key: hookKey, kinds: newWatched(workload.Kinds().Mutable()...),
		changes: newChanges(), events: events.NewFakeRecorder(10), metrics: m, now: time.Now}
	r.rollouts = rolloutOptions{timeout: 15 * time.Minute, poll: rolloutPoll}
	spec := envFromCM("app")
	refs, err := hasher.References(&spec, nil)
	if err != nil {
		b.Fatal(err)
	}
	ids, err := r.contentIDs("ns", refs, sources.Reader{Cache: c}.Lookup(context.Background(), "ns"))
	if err != nil {
		b.Fatal(err)
	}
	return r, contract.Change{Source: "configmap/app", Content: ids["configmap/app"]}
}
