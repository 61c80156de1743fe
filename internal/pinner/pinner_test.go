package pinner

import (
	"context"
	"errors"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
)

var testKey = []byte("0123456789abcdef0123456789abcdef")

const ns = "team"

// world is a namespace with a ConfigMap, an Opaque Secret and a TLS Secret
// that one template reads.
type world struct {
	t *testing.T
	c client.Client
	p *Pinner
}

func newWorld(t *testing.T) *world {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app", Labels: map[string]string{"app": "web"}}, Data: map[string]string{"level": "info", "unread": "x"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "db"}, Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("one")}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "tls"}, Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k")}},
	).Build()
	return &world{t: t, c: c, p: &Pinner{Client: c, Key: testKey}}
}

func template() corev1.PodTemplateSpec {
	return corev1.PodTemplateSpec{Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "app", Env: []corev1.EnvVar{
			{Name: "LEVEL", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}, Key: "level"}}},
			{Name: "PASSWORD", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}},
		}}},
		Volumes: []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: "tls"}}}},
	}}
}

// stamp is what the webhook would stamp t with now.
func (w *world) stamp(t corev1.PodTemplateSpec) string {
	w.t.Helper()
	refs, err := hasher.References(&t.Spec, t.Annotations)
	if err != nil {
		w.t.Fatal(err)
	}
	res, err := hasher.Checksum(testKey, ns, refs, func(s hasher.Source) (hasher.Content, bool, error) {
		_, c, err := w.p.readSource(context.Background(), ns, s)
		return c, true, err
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return res.Checksum
}

// revision creates a ReplicaSet of t, stamped now, and returns a new pod of it.
func (w *world) revision(name string, t corev1.PodTemplateSpec) *corev1.Pod {
	w.t.Helper()
	t = *t.DeepCopy()
	stamp := w.stamp(t)
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[contract.ChecksumAnnotation] = stamp
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name)}, Spec: appsv1.ReplicaSetSpec{Template: t}}
	if err := w.c.Create(context.Background(), rs); err != nil {
		w.t.Fatal(err)
	}
	return w.podOf(rs)
}

func (w *world) podOf(rs *appsv1.ReplicaSet) *corev1.Pod {
	yes := true
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: rs.Name + "-", Annotations: rs.Spec.Template.Annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: &yes}}},
		Spec: *rs.Spec.Template.Spec.DeepCopy(),
	}
}

func (w *world) snapshots() []corev1.ConfigMap {
	var l corev1.ConfigMapList
	if err := w.c.List(context.Background(), &l, client.InNamespace(ns), client.HasLabels{pinning.SnapshotLabel}); err != nil {
		w.t.Fatal(err)
	}
	return l.Items
}

func (w *world) secretSnapshots() []corev1.Secret {
	var l corev1.SecretList
	if err := w.c.List(context.Background(), &l, client.InNamespace(ns), client.HasLabels{pinning.SnapshotLabel}); err != nil {
		w.t.Fatal(err)
	}
	return l.Items
}

func (w *world) setLevel(v string) {
	cm := &corev1.ConfigMap{}
	if err := w.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "app"}, cm); err != nil {
		w.t.Fatal(err)
	}
	cm.Data["level"] = v
	if err := w.c.Update(context.Background(), cm); err != nil {
		w.t.Fatal(err)
	}
}

func TestFirstPodMakesTheSnapshotsAndLaterPodsWriteNothing(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	pod := w.revision("web-1", template())
	first := w.p.Pin(ctx, pod, false)
	if first.Reason != Pinned || first.Writes != 2 || len(first.Snapshots) != 2 {
		t.Fatalf("first pod: %+v", first)
	}
	if _, ok := first.Snapshots[hasher.Source{Kind: hasher.Secret, Name: "tls"}]; ok {
		t.Error("the TLS Secret is pinned")
	}
	cms, secrets := w.snapshots(), w.secretSnapshots()
	if len(cms) != 1 || len(secrets) != 1 {
		t.Fatalf("%d ConfigMap and %d Secret snapshots, want 1 and 1", len(cms), len(secrets))
	}
	if cms[0].Data["level"] != "info" || len(cms[0].Data) != 1 || cms[0].Labels["app"] != "" {
		t.Errorf("ConfigMap snapshot %+v", cms[0])
	}
	if o := cms[0].OwnerReferences; len(o) != 1 || o[0].UID != "uid-web-1" || o[0].Controller != nil {
		t.Errorf("owners %+v", o)
	}
	if first.Snapshots[hasher.Source{Kind: hasher.ConfigMap, Name: "app"}] != cms[0].Name {
		t.Errorf("snapshots %v, made %s", first.Snapshots, cms[0].Name)
	}
	again := w.p.Pin(ctx, pod, false)
	if again.Reason != Pinned || again.Writes != 0 || again.Snapshots[hasher.Source{Kind: hasher.ConfigMap, Name: "app"}] != cms[0].Name {
		t.Errorf("second pod: %+v", again)
	}
}

// TestAPodOfAWaitingRevisionKeepsItsContent is the halt: the ConfigMap
// moved on, the waiting reader's revision did not; its new pods still get
// the old content, and a revision stamped now gets the new.
func TestAPodOfAWaitingRevisionKeepsItsContent(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	old := w.revision("web-1", template())
	before := w.p.Pin(ctx, old, false)
	w.setLevel("broken")
	after := w.p.Pin(ctx, old, false)
	if after.Reason != Pinned || after.Snapshots[hasher.Source{Kind: hasher.ConfigMap, Name: "app"}] != before.Snapshots[hasher.Source{Kind: hasher.ConfigMap, Name: "app"}] {
		t.Fatalf("after the change the old revision's pod got %+v, before %+v", after, before)
	}
	fresh := w.p.Pin(ctx, w.revision("web-2", template()), false)
	if fresh.Reason != Pinned || fresh.Snapshots[hasher.Source{Kind: hasher.ConfigMap, Name: "app"}] == before.Snapshots[hasher.Source{Kind: hasher.ConfigMap, Name: "app"}] {
		t.Fatalf("the new revision's pod got %+v", fresh)
	}
	// The Secret did not change: its snapshot is shared, owned by both.
	secrets := w.secretSnapshots()
	if len(secrets) != 1 || len(secrets[0].OwnerReferences) != 2 {
		t.Errorf("secret snapshots %+v", secrets)
	}
}

func TestNotPinned(t *testing.T) {
	ctx := context.Background()
	t.Run("content moved on before the first pod", func(t *testing.T) {
		w := newWorld(t)
		pod := w.revision("web-1", template())
		w.setLevel("broken")
		if r := w.p.Pin(ctx, pod, false); r.Reason != ContentMovedOn || len(w.snapshots()) != 0 {
			t.Errorf("%+v, %d snapshots", r, len(w.snapshots()))
		}
	})
	t.Run("dry run", func(t *testing.T) {
		w := newWorld(t)
		if r := w.p.Pin(ctx, w.revision("web-1", template()), true); r.Reason != DryRun || len(w.snapshots())+len(w.secretSnapshots()) != 0 {
			t.Errorf("%+v", r)
		}
	})
	t.Run("a look-alike under the snapshot's name", func(t *testing.T) {
		w := newWorld(t)
		pod := w.revision("web-1", template())
		tmp := newWorld(t)
		real := tmp.p.Pin(ctx, tmp.revision("web-1", template()), false)
		name := real.Snapshots[hasher.Source{Kind: hasher.ConfigMap, Name: "app"}]
		yes := true
		evil := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{pinning.SnapshotLabel: "true"},
			Annotations: map[string]string{pinning.SnapshotOfAnnotation: "configmap/app"}}, Immutable: &yes, Data: map[string]string{"level": "evil"}}
		if err := w.c.Create(ctx, evil); err != nil {
			t.Fatal(err)
		}
		if r := w.p.Pin(ctx, pod, false); r.Reason != LookAlike {
			t.Errorf("%+v", r)
		}
	})
	t.Run("a seal copied onto a tenant's object", func(t *testing.T) {
		w := newWorld(t)
		pod := w.revision("web-1", template())
		w.p.Pin(ctx, pod, false)
		cm := w.snapshots()[0]
		w.setLevel("broken")
		// The tenant copies the seal onto a genuine-looking snapshot of the
		// new content: its seal names another snapshot, so it is not used.
		next := pinning.ConfigMapSnapshot(testKey, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "app"}, Data: map[string]string{"level": "broken"}},
			hasher.Reference{Source: hasher.Source{Kind: hasher.ConfigMap, Name: "app"}, Keys: []string{"level"}, EnvOnly: true})
		for k, v := range cm.Labels {
			next.Labels[k] = v
		}
		if err := w.c.Create(ctx, next); err != nil {
			t.Fatal(err)
		}
		if err := w.c.Delete(ctx, &cm); err != nil {
			t.Fatal(err)
		}
		if r := w.p.Pin(ctx, pod, false); r.Reason != ContentMovedOn {
			t.Errorf("%+v", r)
		}
	})
	t.Run("owner template with another stamp", func(t *testing.T) {
		w := newWorld(t)
		pod := w.revision("web-1", template())
		pod.Annotations = map[string]string{contract.ChecksumAnnotation: "v2:0123456789abcdef:" + "ab" + pod.Annotations[contract.ChecksumAnnotation][22:]}
		if r := w.p.Pin(ctx, pod, false); r.Reason != NoRevision {
			t.Errorf("%+v", r)
		}
	})
	t.Run("opted out", func(t *testing.T) {
		w := newWorld(t)
		tpl := template()
		tpl.Annotations = map[string]string{pinning.PinAnnotation: pinning.PinOff}
		pod := w.revision("web-1", tpl)
		if r := w.p.Pin(ctx, pod, false); r.Reason != OptedOut {
			t.Errorf("%+v", r)
		}
	})
	t.Run("unstamped", func(t *testing.T) {
		w := newWorld(t)
		pod := w.revision("web-1", template())
		delete(pod.Annotations, contract.ChecksumAnnotation)
		if r := w.p.Pin(ctx, pod, false); r.Reason != NotStamped {
			t.Errorf("%+v", r)
		}
	})
}

// TestADeletedSnapshot: a tenant (or a failed write) leaves the set
// incomplete. The next pod completes it while the live content still gives
// the stamp; and when the tenant put another object under the name, with
// its labels (seal included) and other content, the seal verifies (it binds
// the name) but the content does not, so no pod is pointed at it.
func TestADeletedSnapshot(t *testing.T) {
	for _, replaced := range []bool{false, true} {
		w := newWorld(t)
		ctx := context.Background()
		pod := w.revision("web-1", template())
		w.p.Pin(ctx, pod, false)
		cm := w.snapshots()[0]
		if err := w.c.Delete(ctx, &cm); err != nil {
			t.Fatal(err)
		}
		want, writes := Pinned, 1
		if replaced {
			evil := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: cm.Name, Labels: cm.Labels, Annotations: cm.Annotations},
				Immutable: cm.Immutable, Data: map[string]string{"level": "evil"}}
			if err := w.c.Create(ctx, evil); err != nil {
				t.Fatal(err)
			}
			want, writes = LookAlike, 0
		}
		if r := w.p.Pin(ctx, pod, false); r.Reason != want || r.Writes != writes {
			t.Errorf("replaced %v: %+v", replaced, r)
		}
	}
}

// TestASealThatLosesARaceIsTriedAgain: the first pods of two revisions
// that share a snapshot seal it at once; the one whose patch fails reads
// it again and adds what is still missing.
func TestASealThatLosesARaceIsTriedAgain(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	w.p.Pin(ctx, w.revision("web-1", template()), false)
	failed := 0
	w.p.Client = interceptor.NewClient(w.c.(client.WithWatch), interceptor.Funcs{
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			if failed == 0 {
				failed++
				return apierrors.NewConflict(corev1.Resource("secrets"), obj.GetName(), errors.New("lost a race"))
			}
			return c.Patch(ctx, obj, patch, opts...)
		},
	})
	w.setLevel("new") // a second revision: a new ConfigMap snapshot, the Secret's shared
	if r := w.p.Pin(ctx, w.revision("web-2", template()), false); r.Reason != Pinned || failed != 1 {
		t.Fatalf("%+v after %d failed patches", r, failed)
	}
	if s := w.secretSnapshots(); len(s) != 1 || len(s[0].OwnerReferences) != 2 {
		t.Errorf("secret snapshots %+v", s)
	}
}
