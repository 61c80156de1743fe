package preview

import (
	"context"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/kindcheck"
	"github.com/confighash/confighash/internal/workload"
)

// refusingChecker refuses every custom kind, as the hook does one whose
// template path leads nowhere.
type refusingChecker struct{ asked []string }

func (c *refusingChecker) Served(_ context.Context, k workload.Kind) (bool, error) {
	c.asked = append(c.asked, k.Name())
	return true, &kindcheck.PathError{GVK: k.GVK, Path: k.TemplatePath, Why: "no such field"}
}

func rolloutReading(ns, name, cm string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("argoproj.io/v1alpha1")
	u.SetKind("Rollout")
	u.SetNamespace(ns)
	u.SetName(name)
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"name": "app", "image": "app",
		"envFrom": []any{map[string]any{"configMapRef": map[string]any{"name": cm}}}}}, "spec", "template", "spec", "containers")
	return u
}

func TestGather(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	other := deployment("elsewhere", nil, envFrom("app"))
	other.Namespace = "other"
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: map[string]string{contract.InjectionLabel: contract.InjectionEnabled}}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "shop"}, Data: map[string]string{"a": "gather-live-value"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "shop"}, Data: map[string][]byte{"pw": []byte("x")}},
		deployment("whole", nil, envFrom("app")),
		deployment("with-db", nil, withSecretKey(envKey("a"), "db", "pw")),
		deployment("excludes", map[string]string{contract.ExcludeAnnotation: "configmap/app"}, envFrom("app")),
		deployment("unrelated", nil, envFrom("not-app")),
		other,
		rolloutReading("shop", "canary", "app"),
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	in, err := Parse(strings.NewReader("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: app}\ndata: {a: gather-new-value}\n"))
	if err != nil {
		t.Fatal(err)
	}
	checker := &refusingChecker{}
	f, err := Gather(t.Context(), c, in, "shop", Options{Kinds: workload.Kinds(), Policy: injection.New("confighash-system"), KindChecker: checker})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range f.Readers {
		names = append(names, r.KindName+"/"+r.Name)
	}
	want := []string{"Deployment/excludes", "Deployment/whole", "Deployment/with-db", "Rollout.argoproj.io/canary"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("readers %v, want %v", names, want)
	}
	if !f.Served.Serves || f.Live == nil || !f.Readers[0].Excluded || f.Readers[3].NotWatched == "" {
		t.Errorf("served %v, live %v, excluded %v, not watched %q", f.Served, f.Live, f.Readers[0].Excluded, f.Readers[3].NotWatched)
	}
	if !reflect.DeepEqual(checker.asked, []string{"Rollout.argoproj.io"}) {
		t.Errorf("kind checks %v, want the Rollout once", checker.asked)
	}
	db := hasher.Source{Kind: hasher.Secret, Name: "db"}
	if o := f.Others[db]; !o.Found || o.ReadErr != nil || len(f.Others) != 1 {
		t.Errorf("others %+v, want secret/db found", f.Others)
	}

	rep := computed(t, f, 8)
	if got := rollingOf(rep); !reflect.DeepEqual(got, []rolled{{"deployment/whole", 1, false, "changed: a"}, {"deployment/with-db", 2, false, "changed: a"}}) {
		t.Errorf("rolling %v", got)
	}
	if got := whyOf(rep); !reflect.DeepEqual(got, map[string]Why{"deployment/excludes": WhyExcluded, "rollout.argoproj.io/canary": WhyNotWatched}) {
		t.Errorf("not rolling %v", got)
	}

	// A namespace not served: its readers are listed, and none rolls.
	f, err = Gather(t.Context(), c, in, "other", Options{Kinds: workload.Kinds(), Policy: injection.New("confighash-system")})
	if err != nil {
		t.Fatal(err)
	}
	if f.Served.Serves || f.Live != nil || len(f.Readers) != 1 {
		t.Errorf("served %v, live %v, readers %v; want not served, a create, one reader", f.Served, f.Live, f.Readers)
	}
}
