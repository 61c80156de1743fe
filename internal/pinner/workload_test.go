package pinner

import (
	"context"
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/internal/pinning"
)

// TestResultNamesTheWorkload: once the revision is read, the result names
// its controller, pinned or not, so that the webhook's Event goes to the
// Deployment a user looks at, not to its ReplicaSet.
func TestResultNamesTheWorkload(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	pod := w.revision("web-1", template())
	rs := &appsv1.ReplicaSet{}
	if err := w.c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "web-1"}, rs); err != nil {
		t.Fatal(err)
	}
	yes := true
	rs.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "uid-web", Controller: &yes}}
	if err := w.c.Update(ctx, rs); err != nil {
		t.Fatal(err)
	}
	if res := w.p.Pin(ctx, pod, false); res.Reason != Pinned || res.Workload == nil || res.Workload.Name != "web" || res.Workload.Kind != "Deployment" {
		t.Fatalf("pinned: %+v, want the Deployment web as its workload", res)
	}
	rs.Annotations = map[string]string{pinning.PinAnnotation: pinning.PinOff}
	if err := w.c.Update(ctx, rs); err != nil {
		t.Fatal(err)
	}
	if res := w.p.Pin(ctx, pod, false); res.Reason != OptedOut || res.Workload == nil || res.Workload.UID != "uid-web" {
		t.Fatalf("opted out: %+v, want the Deployment web as its workload", res)
	}
}

// TestWorkloadOptOutIsReadFromTheWorkload: confighash.dev/pin: "off" is
// the workload's own annotation, as status, preview and the rollback check
// read it. A ControllerRevision holds a copy of its StatefulSet's or
// DaemonSet's annotations taken when it was made, and a CronJob's never
// reach its Jobs: an opt-out added to the workload afterwards is honoured,
// and a stale one left on the revision once the workload dropped it is not.
func TestWorkloadOptOutIsReadFromTheWorkload(t *testing.T) {
	off := map[string]string{pinning.PinAnnotation: pinning.PinOff}
	for _, kind := range []string{"StatefulSet", "DaemonSet", "CronJob"} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			ctx := context.Background()
			pod, rev := w.workloadPod(kind, "db")
			workload := w.workload(kind, "db")
			w.annotate(workload, off)
			if r := w.p.Pin(ctx, pod, false); r.Reason != OptedOut {
				t.Errorf("the %s carries %s=%s, its revision not: %+v, want %q", kind, pinning.PinAnnotation, pinning.PinOff, r, OptedOut)
			}
			w.annotate(workload, nil)
			w.annotate(rev, off)
			if r := w.p.Pin(ctx, pod, false); r.Reason != Pinned {
				t.Errorf("the %s dropped %s=%s, its revision keeps a copy: %+v, want pinned", kind, pinning.PinAnnotation, pinning.PinOff, r)
			}
		})
	}
}

// TestTheWorkloadReadLive: a workload read for its opt-out that was
// replaced (another UID) leaves the pod with no revision, as a replaced
// ReplicaSet does; one that cannot be read is read-failed, or forbidden
// when refused (no RoleBinding of confighash-pinner).
func TestTheWorkloadReadLive(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	pod, _ := w.workloadPod("StatefulSet", "db")
	if err := w.c.Delete(ctx, w.workload("StatefulSet", "db")); err != nil {
		t.Fatal(err)
	}
	again := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db", UID: "uid-of-a-new-db"}}
	if err := w.c.Create(ctx, again); err != nil {
		t.Fatal(err)
	}
	if r := w.p.Pin(ctx, pod, false); r.Reason != NoRevision {
		t.Errorf("replaced: %+v, want %q", r, NoRevision)
	}
	for err, want := range map[error]Reason{
		apierrors.NewForbidden(appsv1.Resource("statefulsets"), "db", errors.New("no RoleBinding")): Forbidden,
		apierrors.NewServiceUnavailable("etcd is away"):                                             ReadFailed,
	} {
		w := newWorld(t)
		pod, _ := w.workloadPod("StatefulSet", "db")
		w.p.Client = interceptor.NewClient(w.c.(client.WithWatch), interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*metav1.PartialObjectMetadata); ok && key.Name == "db" {
				return err
			}
			return c.Get(ctx, key, obj, opts...)
		}})
		if r := w.p.Pin(ctx, pod, false); r.Reason != want {
			t.Errorf("%v: %+v, want %q", err, r, want)
		}
	}
}

// workloadPod makes a pod of the StatefulSet, DaemonSet or CronJob name,
// stamped now, and returns it with its revision: the ControllerRevision,
// or the CronJob's Job.
func (w *world) workloadPod(kind, name string) (*corev1.Pod, client.Object) {
	w.t.Helper()
	if kind != "CronJob" {
		pod := w.controllerRevisionPod(kind, name, "aaa", w.stamped())
		return pod, &appsv1.ControllerRevision{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-aaa"}}
	}
	yes := true
	cj := w.workload(kind, name)
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-28000000", UID: types.UID("uid-" + name + "-28000000"),
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "CronJob", Name: name, UID: cj.GetUID(), Controller: &yes}}},
		Spec: batchv1.JobSpec{Template: w.stamped()}}
	if err := w.c.Create(context.Background(), job); err != nil {
		w.t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job.Name + "-x", Annotations: job.Spec.Template.Annotations,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID, Controller: &yes}}},
		Spec: *job.Spec.Template.Spec.DeepCopy()}
	return pod, job
}

// annotate replaces obj's annotations, as read now.
func (w *world) annotate(obj client.Object, annotations map[string]string) {
	w.t.Helper()
	ctx := context.Background()
	if err := w.c.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		w.t.Fatal(err)
	}
	obj.SetAnnotations(annotations)
	if err := w.c.Update(ctx, obj); err != nil {
		w.t.Fatal(err)
	}
}
