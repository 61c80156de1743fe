package restamp

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

// recordingQueue records AddAfter calls; nothing else may be called.
type recordingQueue struct {
	workqueue.TypedRateLimitingInterface[Request]
	added []string // "REQUEST recheck=BOOL after=DURATION"
}

func (q *recordingQueue) AddAfter(r Request, d time.Duration) {
	q.added = append(q.added, r.String()+" recheck="+boolString(r.Recheck)+" after="+d.String())
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func envFromCM(name string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{
		Name:    "c",
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}},
	}}}
}

func envFromSecret(name string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{
		Name:    "c",
		EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}},
	}}}
}

// readers builds an indexed fake cache of workloads reading configmap/app
// and secret/db in various ways.
func readers(t *testing.T, funcs *interceptor.Funcs) client.Client {
	t.Helper()
	web := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}}
	web.Spec.Template.Spec = envFromCM("app")
	elsewhere := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "other"}}
	elsewhere.Spec.Template.Spec = envFromCM("app")
	optedOut := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "quiet", Namespace: "ns",
		Annotations: map[string]string{contract.InjectionAnnotation: contract.InjectionDisabled}}}
	optedOut.Spec.Template.Spec = envFromCM("app")
	nightly := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "nightly", Namespace: "ns"}}
	nightly.Spec.JobTemplate.Spec.Template.Spec = envFromCM("app")
	db := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}}
	db.Spec.Template.Spec = envFromSecret("db")
	// A Job's template is fixed: the hook never lists Jobs.
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: "ns"}}
	job.Spec.Template.Spec = envFromCM("app")

	b := fake.NewClientBuilder().WithObjects(web, elsewhere, optedOut, nightly, db, job)
	b = withReadersIndex(b)
	if funcs != nil {
		b = b.WithInterceptorFuncs(*funcs)
	}
	return b.Build()
}

func TestHandlerEnqueuesReaders(t *testing.T) {
	const window = 3 * time.Second
	appCM := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"}, Data: map[string]string{"k": "aa"}}
	appCMNewData := appCM.DeepCopy()
	appCMNewData.Data["k"] = "bb"
	appCMNewLabels := appCM.DeepCopy()
	appCMNewLabels.Labels = map[string]string{"x": "y"}
	dbSecret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}, Data: map[string][]byte{"p": {1}}}
	unread := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "unread", Namespace: "ns"}}
	failDeploymentLists := &interceptor.Funcs{
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			if _, ok := list.(*appsv1.DeploymentList); ok {
				return errors.New("boom")
			}
			return c.List(ctx, list, opts...)
		},
	}
	cmReaders := []string{"CronJob ns/nightly recheck=false after=3s", "Deployment ns/web recheck=false after=3s"}

	tests := map[string]struct {
		funcs       *interceptor.Funcs
		fire        func(ctx context.Context, e *enqueuer, q workqueue.TypedRateLimitingInterface[Request])
		want        []string
		wantChanges map[string][]string // request -> sources recorded
	}{
		"configmap created": {
			fire: func(ctx context.Context, e *enqueuer, q workqueue.TypedRateLimitingInterface[Request]) {
				handlerFor[*corev1.ConfigMap](e, hasher.ConfigMap).Create(ctx, event.TypedCreateEvent[*corev1.ConfigMap]{Object: appCM}, q)
			},
			want:        cmReaders,
			wantChanges: map[string][]string{"Deployment ns/web": {"configmap/app"}, "CronJob ns/nightly": {"configmap/app"}},
		},
		"configmap in the initial list": {
			fire: func(ctx context.Context, e *enqueuer, q workqueue.TypedRateLimitingInterface[Request]) {
				handlerFor[*corev1.ConfigMap](e, hasher.ConfigMap).Create(ctx, event.TypedCreateEvent[*corev1.ConfigMap]{Object: appCM, IsInInitialList: true}, q)
			},
			want: []string{"CronJob ns/nightly recheck=true after=3s", "Deployment ns/web recheck=true after=3s"},
		},
		"configmap data updated": {
			fire: func(ctx context.Context, e *enqueuer, q workqueue.TypedRateLimitingInterface[Request]) {
				handlerFor[*corev1.ConfigMap](e, hasher.ConfigMap).Update(ctx, event.TypedUpdateEvent[*corev1.ConfigMap]{ObjectOld: appCM, ObjectNew: appCMNewData}, q)
			},
			want: cmReaders,
		},
		"configmap labels updated": {
			fire: func(ctx context.Context, e *enqueuer, q workqueue.TypedRateLimitingInterface[Request]) {
				handlerFor[*corev1.ConfigMap](e, hasher.ConfigMap).Update(ctx, event.TypedUpdateEvent[*corev1.ConfigMap]{ObjectOld: appCM, ObjectNew: appCMNewLabels}, q)
			},
		},
		"configmap deleted": {
			fire: func(ctx context.Context, e *enqueuer, q workqueue.TypedRateLimitingInterface[Request]) {
				handlerFor[*corev1.ConfigMap](e, hasher.ConfigMap).Delete(ctx, event.TypedDeleteEvent[*corev1.ConfigMap]{Object: appCM}, q)
			},
			want: cmReaders,
		},
		"secret deleted": {
			fire: func(ctx context.Context, e *enqueuer, q workqueue.TypedRateLimitingInterface[Request]) {
				handlerFor[*corev1.Secret](e, hasher.Secret).Delete(ctx, event.TypedDeleteEvent[*corev1.Secret]{Object: dbSecret}, q)
			},
			want:        []string{"StatefulSet ns/db recheck=false after=3s"},
			wantChanges: map[string][]string{"StatefulSet ns/db": {"secret/db"}},
		},
		"a configmap named like a secret": {
			fire: func(ctx context.Context, e *enqueuer, q workqueue.TypedRateLimitingInterface[Request]) {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"}}
				handlerFor[*corev1.ConfigMap](e, hasher.ConfigMap).Create(ctx, event.TypedCreateEvent[*corev1.ConfigMap]{Object: cm}, q)
			},
		},
		"nobody reads it": {
			fire: func(ctx context.Context, e *enqueuer, q workqueue.TypedRateLimitingInterface[Request]) {
				handlerFor[*corev1.ConfigMap](e, hasher.ConfigMap).Create(ctx, event.TypedCreateEvent[*corev1.ConfigMap]{Object: unread}, q)
			},
		},
		"a failing list skips only its kind": {
			funcs: failDeploymentLists,
			fire: func(ctx context.Context, e *enqueuer, q workqueue.TypedRateLimitingInterface[Request]) {
				handlerFor[*corev1.ConfigMap](e, hasher.ConfigMap).Create(ctx, event.TypedCreateEvent[*corev1.ConfigMap]{Object: appCM}, q)
			},
			want: []string{"CronJob ns/nightly recheck=false after=3s"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			e := &enqueuer{cache: readers(t, tc.funcs), kinds: newWatched(workload.Kinds().Mutable()...), window: window, changes: newChanges()}
			q := &recordingQueue{}
			tc.fire(quietCtx(), e, q)
			slices.Sort(q.added)
			if !slices.Equal(q.added, tc.want) {
				t.Errorf("enqueued\n  %s\nwant\n  %s", strings.Join(q.added, "\n  "), strings.Join(tc.want, "\n  "))
			}
			for r, want := range tc.wantChanges {
				kind, nn, _ := strings.Cut(r, " ")
				ns, n, _ := strings.Cut(nn, "/")
				key := Request{KindName: kind}
				key.Namespace, key.Name = ns, n
				if got := e.changes.take(key).names(); !slices.Equal(got, want) {
					t.Errorf("changes for %s = %q, want %q", r, got, want)
				}
			}
		})
	}
}

// TestTemplateChanged: every update the webhook stamped (any change of the
// pod template but the stamp, metadata included) is re-checked, and so is
// one that may change what the workload reads; the hook's own writes and
// status or workload metadata are not. Before, only pod-spec changes were,
// so a rollout restart or a Helm checksum/config annotation stamped by a
// lagging replica kept an old stamp.
func TestTemplateChanged(t *testing.T) {
	base := func() *appsv1.Deployment {
		return &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"},
					Annotations: map[string]string{contract.ChecksumAnnotation: "v2:k:old"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "a"}}}}},
		}
	}
	tests := map[string]struct {
		mutate func(*appsv1.Deployment)
		want   bool
	}{
		"nothing": {func(*appsv1.Deployment) {}, false},
		"only the stamp (the hook's re-stamp)": {func(d *appsv1.Deployment) {
			d.Spec.Template.Annotations[contract.ChecksumAnnotation] = "v2:k:new"
		}, false},
		"hold annotation": {func(d *appsv1.Deployment) {
			d.Annotations = map[string]string{contract.HoldAnnotation: "v1 since=2030-01-02T03:04:05Z level=0 quiet=1m0s"}
		}, false},
		"workload label":  {func(d *appsv1.Deployment) { d.Labels = map[string]string{"team": "x"} }, false},
		"replicas":        {func(d *appsv1.Deployment) { d.Spec.Replicas = new(int32(3)) }, false},
		"status":          {func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 1 }, false},
		"pod spec":        {func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "b" }, true},
		"rollout restart": {func(d *appsv1.Deployment) { d.Spec.Template.Annotations["kubectl.kubernetes.io/restartedAt"] = "now" }, true},
		"helm checksum annotation": {func(d *appsv1.Deployment) {
			d.Spec.Template.Annotations["checksum/config"] = "abc"
		}, true},
		"template label": {func(d *appsv1.Deployment) { d.Spec.Template.Labels["version"] = "2" }, true},
		"include": {func(d *appsv1.Deployment) {
			d.Annotations = map[string]string{contract.IncludeAnnotation: "configmap/x"}
		}, true},
		"opt-out": {func(d *appsv1.Deployment) {
			d.Annotations = map[string]string{contract.InjectionAnnotation: contract.InjectionDisabled}
		}, true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			n := base()
			tc.mutate(n)
			if got := templateChanged(deploymentKind(t), base(), n); got != tc.want {
				t.Errorf("templateChanged = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTemplateChangedByGeneration: at one stored generation the templates
// are not compared (the spec, and so the template, is the one the
// generation was given for), while the annotations that change what the
// workload reads still are, since a metadata edit need not bump the
// generation (only a Deployment's annotations do). A
// bumped generation compares the templates as before.
func TestTemplateChangedByGeneration(t *testing.T) {
	at := func(g int64, mutate func(*appsv1.Deployment)) *appsv1.Deployment {
		d := &appsv1.Deployment{
			ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Generation: g},
			Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{contract.ChecksumAnnotation: "v2:k:old"}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "a"}}}}},
		}
		mutate(d)
		return d
	}
	none := func(*appsv1.Deployment) {}
	image := func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "b" }
	tests := map[string]struct {
		old, new *appsv1.Deployment
		want     bool
	}{
		"status write": {at(3, none), at(3, func(d *appsv1.Deployment) { d.Status.ReadyReplicas = 1 }), false},
		"same generation, templates not compared": {at(3, none), at(3, image), false},
		"include at the same generation": {at(3, none), at(3, func(d *appsv1.Deployment) {
			d.Annotations = map[string]string{contract.IncludeAnnotation: "configmap/x"}
		}), true},
		"pod spec, bumped": {at(3, none), at(4, image), true},
		"the hook's re-stamp, bumped": {at(3, none), at(4, func(d *appsv1.Deployment) {
			d.Spec.Template.Annotations[contract.ChecksumAnnotation] = "v2:k:new"
		}), false},
	}
	for name, tc := range tests {
		if got := templateChanged(deploymentKind(t), tc.old, tc.new); got != tc.want {
			t.Errorf("%s: templateChanged = %v, want %v", name, got, tc.want)
		}
	}
}

// BenchmarkTemplateChangedStatusWrite is the update most often seen: a
// status write, for a Deployment and for a Rollout (unstructured).
func BenchmarkTemplateChangedStatusWrite(b *testing.B) {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Generation: 7},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{contract.ChecksumAnnotation: "v2:k:old"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "a",
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}}}}}},
	}
	written := d.DeepCopy()
	written.Status.ReadyReplicas = 1
	deploy := deploymentKind(b)
	rollout, ok := workload.Kinds().Of(schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"})
	if !ok {
		b.Fatal("no Rollout kind")
	}
	toUnstructured := func(o *appsv1.Deployment) *unstructured.Unstructured {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			b.Fatal(err)
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetGroupVersionKind(rollout.GVK)
		return u
	}
	ro, rw := toUnstructured(d), toUnstructured(written)
	b.Run("Deployment", func(b *testing.B) {
		for b.Loop() {
			if templateChanged(deploy, d, written) {
				b.Fatal("a status write changed the template")
			}
		}
	})
	b.Run("Rollout", func(b *testing.B) {
		for b.Loop() {
			if templateChanged(rollout, ro, rw) {
				b.Fatal("a status write changed the template")
			}
		}
	})
}

func deploymentKind(t testing.TB) workload.Kind {
	t.Helper()
	k, ok := workload.Kinds().Of(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	if !ok {
		t.Fatal("no Deployment kind")
	}
	return k
}

func TestContentChanged(t *testing.T) {
	now := metav1.Now()
	d1 := []byte("0123456789abcdef0123456789abcdef")
	d2 := []byte("fedcba9876543210fedcba9876543210")
	baseCM := func() *corev1.ConfigMap {
		return &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns", ResourceVersion: "1", Labels: map[string]string{"a": "1"}},
			Data:       map[string]string{"k": "aa", "l": "bb"},
			BinaryData: map[string][]byte{"b": d1},
		}
	}
	baseSecret := func() *corev1.Secret {
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns", ResourceVersion: "1"},
			Type:       corev1.SecretTypeOpaque,
			Data:       map[string][]byte{"password": d1},
		}
	}
	cmWith := func(f func(*corev1.ConfigMap)) *corev1.ConfigMap { c := baseCM(); f(c); return c }
	secretWith := func(f func(*corev1.Secret)) *corev1.Secret { s := baseSecret(); f(s); return s }

	tests := map[string]struct {
		old, new client.Object
		want     bool
	}{
		"configmap unchanged": {
			old: baseCM(), new: baseCM(), want: false,
		},
		"configmap data value": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { c.Data["k"] = "cc" }), want: true,
		},
		"configmap data key added": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { c.Data["m"] = "aa" }), want: true,
		},
		"configmap data key removed": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { delete(c.Data, "l") }), want: true,
		},
		"configmap data key renamed": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { delete(c.Data, "l"); c.Data["m"] = "bb" }), want: true,
		},
		"configmap binaryData value": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { c.BinaryData["b"] = d2 }), want: true,
		},
		"configmap binaryData removed": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { c.BinaryData = nil }), want: true,
		},
		"configmap data moved to binaryData": {
			old:  cmWith(func(c *corev1.ConfigMap) { c.Data = map[string]string{"x": "aa"}; c.BinaryData = nil }),
			new:  cmWith(func(c *corev1.ConfigMap) { c.Data = nil; c.BinaryData = map[string][]byte{"x": {0xaa}} }),
			want: true,
		},
		"configmap nil and empty data alike": {
			old:  cmWith(func(c *corev1.ConfigMap) { c.Data = nil; c.BinaryData = nil }),
			new:  cmWith(func(c *corev1.ConfigMap) { c.Data = map[string]string{}; c.BinaryData = map[string][]byte{} }),
			want: false,
		},
		"configmap labels only": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { c.Labels = map[string]string{"a": "2"}; c.ResourceVersion = "2" }), want: false,
		},
		"configmap annotations only": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { c.Annotations = map[string]string{"x": "y"}; c.ResourceVersion = "2" }), want: false,
		},
		"configmap deletion starts": {
			old: baseCM(), new: cmWith(func(c *corev1.ConfigMap) { c.DeletionTimestamp = &now }), want: true,
		},
		"configmap deletion already started": {
			old:  cmWith(func(c *corev1.ConfigMap) { c.DeletionTimestamp = &now }),
			new:  cmWith(func(c *corev1.ConfigMap) { c.DeletionTimestamp = &now; c.ResourceVersion = "2" }),
			want: false,
		},
		"configmap deletion cancelled": {
			old: cmWith(func(c *corev1.ConfigMap) { c.DeletionTimestamp = &now }), new: baseCM(), want: true,
		},
		"secret unchanged": {
			old: baseSecret(), new: baseSecret(), want: false,
		},
		"secret data value": {
			old: baseSecret(), new: secretWith(func(s *corev1.Secret) { s.Data["password"] = d2 }), want: true,
		},
		"secret data key added": {
			old: baseSecret(), new: secretWith(func(s *corev1.Secret) { s.Data["user"] = d1 }), want: true,
		},
		"secret data emptied": {
			old: baseSecret(), new: secretWith(func(s *corev1.Secret) { s.Data = nil }), want: true,
		},
		"secret labels only": {
			old: baseSecret(), new: secretWith(func(s *corev1.Secret) { s.Labels = map[string]string{"x": "y"}; s.ResourceVersion = "2" }), want: false,
		},
		"secret deletion starts": {
			old: baseSecret(), new: secretWith(func(s *corev1.Secret) { s.DeletionTimestamp = &now }), want: true,
		},
		"other kinds count as changed": {
			old: &corev1.Pod{}, new: &corev1.Pod{}, want: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := contentChanged(tc.old, tc.new); got != tc.want {
				t.Errorf("contentChanged = %v, want %v", got, tc.want)
			}
		})
	}
}
