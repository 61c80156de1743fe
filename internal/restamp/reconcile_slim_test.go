package restamp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/internal/contract"
)

// TestRestampFromSlimCopy: the hook reads workloads from a cache of slim
// copies (workload.SlimObject) and re-stamps from them. Its patch, applied
// to the whole stored object as the apiserver would, changes the stamp and
// drops the hold it ends, and nothing else: not the template's other
// annotations, its containers, the workload's foreign annotations.
func TestRestampFromSlimCopy(t *testing.T) {
	data := map[string]string{"k": "v2"}
	ns := servedNS()
	cm := slimCM(t, "ns", "app", data)
	whole := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "w", ResourceVersion: "5", Generation: 2,
		Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": strings.Repeat("{}", 1000), "team": "a",
			// Not sealed: ignored, and dropped by the re-stamp.
			contract.HoldAnnotation: "v1 since=2026-12-01T00:00:00Z"}}}
	whole.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}
	whole.Spec.Template.Labels = map[string]string{"app": "web"}
	whole.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: "v2:old:old", "prometheus.io/scrape": "true"}
	whole.Spec.Template.Spec = envFromCM("app")
	whole.Spec.Template.Spec.Containers[0].Image = "img:1"
	whole.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "BIG", Value: strings.Repeat("x", 64<<10)}}
	cached := deploymentKind(t).SlimObject(whole.DeepCopy())

	var patched *appsv1.Deployment
	c := interceptor.NewClient(fake.NewClientBuilder().WithObjects(ns, cm, cached).Build(), interceptor.Funcs{
		Patch: func(_ context.Context, _ client.WithWatch, obj client.Object, p client.Patch, _ ...client.PatchOption) error {
			body, err := p.Data(obj)
			if err != nil {
				return err
			}
			if p.Type() != types.MergePatchType {
				t.Fatalf("patch type %s, want a merge patch", p.Type())
			}
			raw, err := json.Marshal(whole)
			if err != nil {
				return err
			}
			out, err := jsonpatch.MergePatch(raw, body)
			if err != nil {
				return err
			}
			patched = &appsv1.Deployment{}
			return json.Unmarshal(out, patched)
		},
	})
	r, _ := testReconciler(t, c, newFlapGuard(DefaultOptions(), MaxFlapEntries), time.Now)
	req := req("web")
	if _, err := r.Reconcile(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if patched == nil {
		t.Fatal("no re-stamp was written")
	}
	want := whole.DeepCopy()
	delete(want.Annotations, contract.HoldAnnotation)
	want.Spec.Template.Annotations[contract.ChecksumAnnotation] = wantSum(t, data)
	if !equality.Semantic.DeepEqual(patched, want) {
		got, _ := json.Marshal(patched.Annotations)
		gt, _ := json.Marshal(patched.Spec.Template.Annotations)
		t.Errorf("the whole object after the hook's patch differs from the whole object re-stamped:\nannotations %s\ntemplate annotations %s", got, gt)
	}
}
