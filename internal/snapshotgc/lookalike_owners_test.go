package snapshotgc

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/internal/pinning"
)

// An application's own ConfigMap that a
// tenant labelled confighash.dev/snapshot=true (who may label it but not
// delete it) and that running pods read must not be made owned by those
// pods: the Kubernetes garbage collector would delete it with the last of
// them. The delete path verifies the object first (deleteUnread); the owner
// path must too.
func TestALookAlikeGetsNoPodOwners(t *testing.T) {
	w := newTestWorld()
	app := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "app-config", UID: "app-config-uid",
		Labels: map[string]string{pinning.SnapshotLabel: "true"}}, Data: map[string]string{"k": "live"}}
	reader := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "web-2", UID: "pod-2"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: app.Name}}}},
	}}}}
	objs := append(append([]client.Object{}, w.objs...), app, reader)
	cl := fake.NewClientBuilder().WithObjects(objs...).Build()
	var meta []runtime.Object
	for _, cm := range []*corev1.ConfigMap{w.read, w.unread, app} {
		if err := cl.Get(t.Context(), client.ObjectKeyFromObject(cm), cm); err != nil {
			t.Fatal(err)
		}
		meta = append(meta, metaOf(cm))
	}
	run(t, cl, meta)

	awaitTheLook(t, cl, w)
	got := &corev1.ConfigMap{}
	if err := cl.Get(t.Context(), client.ObjectKeyFromObject(app), got); err != nil {
		t.Fatal(err)
	}
	if len(got.OwnerReferences) != 0 {
		t.Fatalf("an object labelled as a snapshot but not confighash's (its content does not give its name) was made owned by %v: the garbage collector deletes it with those pods", got.OwnerReferences)
	}
}
