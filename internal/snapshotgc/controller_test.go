package snapshotgc

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	metadatafake "k8s.io/client-go/metadata/fake"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/pinning"
)

// world is a pinning namespace "n" with two snapshots that lost their only
// owner: one an orphaned pod still reads, one nothing reads.
type world struct {
	read, unread *corev1.ConfigMap
	pod          *corev1.Pod
	objs         []client.Object
	meta         []runtime.Object
}

func newTestWorld() world {
	var w world
	w.read = pinningSnapshot(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "app"}, Data: map[string]string{"k": "v2"}})
	w.unread = pinningSnapshot(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "app"}, Data: map[string]string{"k": "v1"}})
	w.read.UID, w.unread.UID = "read", "unread"
	w.pod = &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "n", Name: "web-1", UID: "pod"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: w.read.Name}}}},
	}}}}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{
		contract.InjectionLabel: contract.InjectionEnabled, pinning.NamespaceLabel: pinning.NamespaceEnabled,
	}}}
	w.objs = []client.Object{w.read, w.unread, w.pod, ns}
	for _, cm := range []*corev1.ConfigMap{w.read, w.unread} {
		w.meta = append(w.meta, metaOf(cm))
	}
	return w
}

// awaitTheLook waits until the collector has looked at w's namespace: the
// unread snapshot deleted, the read one owned by its pod.
func awaitTheLook(t *testing.T, cl client.Client, w world) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 20*time.Millisecond, 10*time.Second, true, func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(w.unread), cm); !apierrors.IsNotFound(err) {
			return false, nil
		}
		if err := cl.Get(ctx, client.ObjectKeyFromObject(w.read), cm); err != nil {
			return false, err
		}
		return len(cm.OwnerReferences) == 1 && cm.OwnerReferences[0].UID == w.pod.UID && cm.OwnerReferences[0].Kind == "Pod", nil
	})
	if err != nil {
		t.Fatalf("the unread snapshot not deleted, or the read one not owned by its pod: %v", err)
	}
}

// metaOf is cm as the collector's metadata informer holds it.
func metaOf(cm *corev1.ConfigMap) *metav1.PartialObjectMetadata {
	m := &metav1.PartialObjectMetadata{ObjectMeta: *cm.ObjectMeta.DeepCopy()}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return m
}

// TestControllerOwnsReadSnapshotsByPodsAndDeletesTheRest runs the whole
// loop: the informers' first list queues the namespace, the pod LIST finds
// the reader, and the writes land.
func TestControllerOwnsReadSnapshotsByPodsAndDeletesTheRest(t *testing.T) {
	w := newTestWorld()
	cl := fake.NewClientBuilder().WithObjects(w.objs...).Build()
	for _, cm := range []*corev1.ConfigMap{w.read, w.unread} {
		if err := cl.Get(t.Context(), client.ObjectKeyFromObject(cm), cm); err != nil {
			t.Fatal(err)
		}
	}
	// The informer must see the versions the fake client holds.
	for i, cm := range []*corev1.ConfigMap{w.read, w.unread} {
		w.meta[i].(*metav1.PartialObjectMetadata).ResourceVersion = cm.ResourceVersion
	}
	run(t, cl, w.meta)
	awaitTheLook(t, cl, w)
}

// run starts a controller over cl and the snapshots' metadata meta until
// the test ends.
func run(t *testing.T, cl client.Client, meta []runtime.Object) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c, err := New(Config{
		Metadata:   metadatafake.NewSimpleMetadataClient(scheme, meta...),
		Client:     cl,
		Namespaces: cl,
		Policy:     injection.New("confighash-system"),
		Key:        testKey,
		Coalesce:   time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}
