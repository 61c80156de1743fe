package status

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/randfill"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

// These tests walk the registry instead of naming kinds, so that a kind
// added to workload is covered here without an edit, and a kind that status
// handled by a list of its own would fail them.

func TestParseTargetResolvesEveryRegistryKind(t *testing.T) {
	for _, k := range workload.Kinds().Mutable() {
		kind := strings.ToLower(k.GVK.Kind)
		names := append([]string{kind, k.Resource, strings.ToUpper(kind)}, k.ShortNames...)
		if k.GVK.Group != "" {
			names = append(names, kind+"."+k.GVK.Group, k.Resource+"."+k.GVK.Group)
		}
		for _, n := range names {
			t.Run(k.GVK.Kind+"/"+n, func(t *testing.T) {
				got, err := ParseTarget(n+"/web", workload.Kinds())
				if err != nil {
					t.Fatalf("ParseTarget(%q): %v", n+"/web", err)
				}
				if got.KindName != k.Name() {
					t.Errorf("ParseTarget(%q).KindName = %q, want %q", n+"/web", got.KindName, k.Name())
				}
				if ks := got.kinds(workload.Kinds()); len(ks) != 1 || ks[0].GVK != k.GVK {
					t.Errorf("target %v covers %v, want only %s", got, ks, k.GVK)
				}
			})
		}
	}
}

func TestBareNameCoversEveryMutableKind(t *testing.T) {
	got := map[string]bool{}
	for _, k := range (Target{Name: "web"}).kinds(workload.Kinds()) {
		got[k.GVK.Kind] = true
	}
	for _, k := range workload.Kinds().Mutable() {
		if !got[k.GVK.Kind] {
			t.Errorf("a bare name does not cover %s", k.GVK.Kind)
		}
	}
}

func TestKindTextsNameEveryMutableKind(t *testing.T) {
	notFound := (&NotFoundError{Target: Target{Name: "web"}, Namespace: "ns", Kinds: workload.Kinds()}).Error()
	_, unknown := ParseTarget("nosuchkind/web", workload.Kinds())
	for _, k := range workload.Kinds().Mutable() {
		kind := strings.ToLower(k.GVK.Kind)
		texts := map[string]string{"KindsHelp": KindsHelp(), "NotFoundError": notFound, "unknown kind": unknown.Error()}
		for what, text := range texts {
			if !strings.Contains(text, kind) {
				t.Errorf("%s %q does not name %s", what, text, kind)
			}
		}
		for _, short := range k.ShortNames {
			if !strings.Contains(KindsHelp(), short) {
				t.Errorf("KindsHelp %q lacks short name %s", KindsHelp(), short)
			}
		}
	}
}

// TestDryRunCopyEveryRegistryKind fills the status of an object of each
// kind and checks the dry-run copy is fit for a CREATE: no status, no stamp.
func TestDryRunCopyEveryRegistryKind(t *testing.T) {
	for _, k := range workload.Kinds() {
		t.Run(k.GVK.Kind, func(t *testing.T) {
			if k.Unstructured() {
				testDryRunCopyCustom(t, k)
				return
			}
			obj := k.New()
			st := reflect.ValueOf(obj).Elem().FieldByName("Status")
			if !st.IsValid() {
				t.Fatalf("%T has no Status field", obj)
			}
			randfill.NewWithSeed(1).NilChance(0).Fill(st.Addr().Interface())
			if st.IsZero() {
				t.Fatalf("filling the status of %T left it empty", obj)
			}
			tmpl, ok := k.PodTemplate(obj)
			if !ok {
				t.Fatalf("no pod template in %T", obj)
			}
			tmpl.SetChecksum("v1:old")
			obj.SetName("web")

			cp := dryRunCopy(workload.Kinds(), obj)
			if reflect.TypeOf(cp) != reflect.TypeOf(obj) {
				t.Fatalf("copy is %T, want %T", cp, obj)
			}
			if !reflect.ValueOf(cp).Elem().FieldByName("Status").IsZero() {
				t.Errorf("copy of a %s keeps its status", k.GVK.Kind)
			}
			if tmpl, _ := k.PodTemplate(cp); tmpl.Checksum() != "" {
				t.Errorf("copy of a %s keeps the stamp", k.GVK.Kind)
			}
			if st.IsZero() {
				t.Errorf("the original %s lost its status", k.GVK.Kind)
			}
		})
	}
}

// testDryRunCopyCustom is TestDryRunCopyEveryRegistryKind for a kind held as
// unstructured: the copy loses status and stamp, and keeps the template.
func testDryRunCopyCustom(t *testing.T, k workload.Kind) {
	u := k.New().(*unstructured.Unstructured)
	u.SetName("web")
	tmpl := map[string]any{
		"metadata": map[string]any{"annotations": map[string]any{contract.ChecksumAnnotation: "v1:old", "team": "a"}},
		"spec":     map[string]any{"containers": []any{map[string]any{"name": "app", "image": "app"}}},
	}
	if err := unstructured.SetNestedMap(u.Object, tmpl, k.TemplatePath...); err != nil {
		t.Fatal(err)
	}
	u.Object["status"] = map[string]any{"replicas": int64(3)}
	cp := dryRunCopy(workload.Kinds(), u).(*unstructured.Unstructured)
	if _, ok := cp.Object["status"]; ok {
		t.Errorf("copy of a %s keeps its status", k.GVK.Kind)
	}
	got, ok := k.PodTemplate(cp)
	if !ok {
		t.Fatal("copy has no pod template")
	}
	if got.Checksum() != "" || got.Meta.Annotations["team"] != "a" || len(got.Spec.Containers) != 1 {
		t.Errorf("copy's template = %+v, want the template without the stamp", got)
	}
	if orig, _ := k.PodTemplate(u); orig.Checksum() != "v1:old" {
		t.Error("dryRunCopy changed the original")
	}
}
