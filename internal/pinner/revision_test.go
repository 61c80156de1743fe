package pinner

import (
	"context"
	"encoding/json"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
)

// stamped is template() stamped with the world's content now.
func (w *world) stamped() corev1.PodTemplateSpec {
	t := template()
	t.Annotations = map[string]string{contract.ChecksumAnnotation: w.stamp(t)}
	return t
}

// workload makes the StatefulSet, DaemonSet or CronJob name, its UID
// uid-name, unless it exists: the controller of revisions and Jobs.
func (w *world) workload(kind, name string) client.Object {
	w.t.Helper()
	obj := map[string]client.Object{"StatefulSet": &appsv1.StatefulSet{}, "DaemonSet": &appsv1.DaemonSet{}, "CronJob": &batchv1.CronJob{}}[kind]
	obj.SetNamespace(ns)
	obj.SetName(name)
	obj.SetUID(types.UID("uid-" + name))
	if err := w.c.Create(context.Background(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
		w.t.Fatal(err)
	}
	return obj
}

// controllerRevisionPod makes a ControllerRevision of t owned by a
// StatefulSet or DaemonSet (made unless it exists), and a pod of it
// labelled as its controller labels it.
func (w *world) controllerRevisionPod(kind, owner, hash string, t corev1.PodTemplateSpec) *corev1.Pod {
	w.t.Helper()
	yes := true
	data, err := json.Marshal(map[string]any{"spec": map[string]any{"template": t}})
	if err != nil {
		w.t.Fatal(err)
	}
	ownerUID := w.workload(kind, owner).GetUID()
	name := owner + "-" + hash
	cr := &appsv1.ControllerRevision{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner, UID: ownerUID, Controller: &yes}}},
		Data: runtime.RawExtension{Raw: data},
	}
	if err := w.c.Create(context.Background(), cr); err != nil {
		w.t.Fatal(err)
	}
	label := name // a StatefulSet's pods carry the revision's name
	if kind == "DaemonSet" {
		label = hash
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: owner + "-0", Annotations: t.Annotations,
			Labels:          map[string]string{revisionHashLabel: label},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: owner, UID: ownerUID, Controller: &yes}}},
		Spec: *t.Spec.DeepCopy(),
	}
}

func TestControllerRevisionsOwnTheirSnapshots(t *testing.T) {
	for _, kind := range []string{"StatefulSet", "DaemonSet"} {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			ctx := context.Background()
			old := w.controllerRevisionPod(kind, "db", "aaa", w.stamped())
			first := w.p.Pin(ctx, old, false)
			if first.Reason != Pinned {
				t.Fatalf("%+v", first)
			}
			cms := w.snapshots()
			if len(cms) != 1 || len(cms[0].OwnerReferences) != 1 || cms[0].OwnerReferences[0].Kind != "ControllerRevision" || cms[0].OwnerReferences[0].Name != "db-aaa" {
				t.Fatalf("snapshots %+v", cms)
			}
			// A partition keeps ordinals on the old revision: after a
			// change, a pod of the old revision keeps its content, one of
			// the new gets the new.
			w.setLevel("new")
			if again := w.p.Pin(ctx, old, false); again.Reason != Pinned || again.Snapshots[appSource()] != first.Snapshots[appSource()] {
				t.Errorf("old revision after the change: %+v", again)
			}
			fresh := w.p.Pin(ctx, w.controllerRevisionPod(kind, "db", "bbb", w.stamped()), false)
			if fresh.Reason != Pinned || fresh.Snapshots[appSource()] == first.Snapshots[appSource()] {
				t.Errorf("new revision: %+v", fresh)
			}
		})
	}
}

func TestARevisionOfAnotherControllerIsNotUsed(t *testing.T) {
	w := newWorld(t)
	pod := w.controllerRevisionPod("StatefulSet", "db", "aaa", w.stamped())
	pod.OwnerReferences[0].UID = "uid-of-a-new-db"
	if r := w.p.Pin(context.Background(), pod, false); r.Reason != NoRevision {
		t.Errorf("%+v", r)
	}
	unlabelled := w.controllerRevisionPod("StatefulSet", "web", "bbb", w.stamped())
	delete(unlabelled.Labels, revisionHashLabel)
	if r := w.p.Pin(context.Background(), unlabelled, false); r.Reason != NoRevision {
		t.Errorf("%+v", r)
	}
}

func TestJobsOwnTheirSnapshots(t *testing.T) {
	w := newWorld(t)
	yes := true
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "migrate", UID: "uid-migrate"}, Spec: batchv1.JobSpec{Template: w.stamped()}}
	if err := w.c.Create(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "migrate-x", Annotations: job.Spec.Template.Annotations,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "migrate", UID: "uid-migrate", Controller: &yes}}},
		Spec: *job.Spec.Template.Spec.DeepCopy()}
	if r := w.p.Pin(context.Background(), pod, false); r.Reason != Pinned {
		t.Fatalf("%+v", r)
	}
	if o := w.snapshots()[0].OwnerReferences; len(o) != 1 || o[0].Kind != "Job" || o[0].UID != "uid-migrate" {
		t.Errorf("owners %+v", o)
	}
}

func appSource() hasher.Source { return hasher.Source{Kind: hasher.ConfigMap, Name: "app"} }
