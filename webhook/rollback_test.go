package webhook

import (
	"context"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
	"github.com/confighash/confighash/internal/waves"
)

// fakeRevisions holds the live revisions' templates and the stamps with
// sealed snapshots, and counts the live reads.
type fakeRevisions struct {
	templates []corev1.PodTemplateSpec
	sealed    map[string]bool
	lists     int
}

func (f *fakeRevisions) LiveRevision(_ context.Context, _ string, _ metav1.OwnerReference, _ *metav1.LabelSelector, tmpl corev1.PodTemplateSpec, _ map[string]string) (bool, error) {
	f.lists++
	for _, t := range f.templates {
		if equality.Semantic.DeepEqual(t, tmpl) {
			return true, nil
		}
	}
	return false, nil
}

func (f *fakeRevisions) Sealed(_ context.Context, _, stamp string, _ corev1.PodTemplateSpec) (bool, error) {
	return f.sealed[stamp], nil
}

const pinningNS = "ns"

func pinningHandler(t *testing.T, src fakeSources, revs *fakeRevisions) *Handler {
	t.Helper()
	h := newHandler(t, src)
	labels := map[string]string{contract.InjectionLabel: contract.InjectionEnabled, pinning.NamespaceLabel: pinning.NamespaceEnabled}
	h.Namespaces = namespaces{pinningNS: labels}
	h.Revisions = revs
	return h
}

func stampOf(t *testing.T, src fakeSources, d *appsv1.Deployment) string {
	t.Helper()
	refs, _ := hasher.References(&d.Spec.Template.Spec, nil)
	r, err := hasher.Checksum(testKey, pinningNS, refs, src.Lookup(context.Background(), pinningNS))
	if err != nil {
		t.Fatal(err)
	}
	return r.Checksum
}

func withUID(d *appsv1.Deployment) { d.UID = "uid-web" }

// haltIn is the halt an answer leaves on the workload's own metadata.
func haltIn(t *testing.T, req admission.Request, resp admission.Response) (string, bool) {
	t.Helper()
	v, ok := answered(t, req, resp).Annotations[contract.HaltAnnotation]
	return v, ok
}

func TestRollbackKeepsTheRevisionsStamp(t *testing.T) {
	cfg := hasher.Source{Kind: hasher.ConfigMap, Name: "cfg"}
	v1, v2 := fakeSources{cfg: {"k": "v1"}}, fakeSources{cfg: {"k": "v2"}}
	old := stampOf(t, v1, deployment())
	current := stampOf(t, v2, deployment())
	revisionOf := func(mutate ...func(*appsv1.Deployment)) corev1.PodTemplateSpec {
		return deployment(mutate...).Spec.Template
	}
	subject := contract.Subject{Kind: "Deployment", Namespace: pinningNS, Name: "app", UID: "uid-web"}

	tests := map[string]struct {
		revs      *fakeRevisions
		req       admission.Request
		wantStamp string
		rollback  bool
	}{
		"undo of a config-only revision": {
			revs:      &fakeRevisions{templates: []corev1.PodTemplateSpec{revisionOf(withStamp(old))}, sealed: map[string]bool{old: true}},
			req:       request(admissionv1.Update, deployment(withUID, withStamp(old)), deployment(withUID, withStamp(current))),
			wantStamp: old, rollback: true,
		},
		"undo of an image and config revision": {
			revs: &fakeRevisions{templates: []corev1.PodTemplateSpec{revisionOf(withStamp(old), withImage("a"))}, sealed: map[string]bool{old: true}},
			req: request(admissionv1.Update, deployment(withUID, withStamp(old), withImage("a")),
				deployment(withUID, withStamp(current), withImage("b"))),
			wantStamp: old, rollback: true,
		},
		"a copied stamp of no live revision is an edit": {
			revs: &fakeRevisions{templates: []corev1.PodTemplateSpec{revisionOf(withStamp(old))}, sealed: map[string]bool{old: true}},
			req: request(admissionv1.Update, deployment(withUID, withStamp(old), withImage("other")),
				deployment(withUID, withStamp(current))),
			wantStamp: current,
		},
		"a live revision whose snapshots are gone is an edit": {
			revs:      &fakeRevisions{templates: []corev1.PodTemplateSpec{revisionOf(withStamp(old))}, sealed: map[string]bool{}},
			req:       request(admissionv1.Update, deployment(withUID, withStamp(old)), deployment(withUID, withStamp(current))),
			wantStamp: current,
		},
		"opted out of pinning": {
			revs: &fakeRevisions{templates: []corev1.PodTemplateSpec{revisionOf(withStamp(old))}, sealed: map[string]bool{old: true}},
			req: request(admissionv1.Update, deployment(withUID, withStamp(old), func(d *appsv1.Deployment) {
				d.Annotations = map[string]string{pinning.PinAnnotation: pinning.PinOff}
			}), deployment(withUID, withStamp(current))),
			wantStamp: current,
		},
		"a dry run reads nothing live, and is stamped as an edit": {
			revs: &fakeRevisions{templates: []corev1.PodTemplateSpec{revisionOf(withStamp(old))}, sealed: map[string]bool{old: true}},
			req: func() admission.Request {
				r := request(admissionv1.Update, deployment(withUID, withStamp(old)), deployment(withUID, withStamp(current)))
				yes := true
				r.DryRun = &yes
				return r
			}(),
			wantStamp: current,
		},
		"a write that names a field manager (apply, a GitOps sync) is an edit": {
			revs: &fakeRevisions{templates: []corev1.PodTemplateSpec{revisionOf(withStamp(old))}, sealed: map[string]bool{old: true}},
			req: byManager("argocd-controller", request(admissionv1.Update, deployment(withUID, withStamp(old)),
				deployment(withUID, withStamp(current)))),
			wantStamp: current,
		},
		"the hook's own write is never a rollback": {
			revs: &fakeRevisions{templates: []corev1.PodTemplateSpec{revisionOf(withStamp(old))}, sealed: map[string]bool{old: true}},
			req: byManager(contract.FieldManager, request(admissionv1.Update, deployment(withUID, withStamp(old)),
				deployment(withUID, withStamp(current)))),
			wantStamp: old,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			h := pinningHandler(t, v2, tc.revs)
			resp := h.Handle(context.Background(), tc.req)
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result)
			}
			if got := answeredStampAnywhere(t, tc.req, resp); got != tc.wantStamp {
				t.Errorf("stamp = %q, want %q", got, tc.wantStamp)
			}
			v, ok := haltIn(t, tc.req, resp)
			if ok != tc.rollback {
				t.Fatalf("halt recorded: %v, want %v (patch %s)", ok, tc.rollback, mustJSON(resp.Patches))
			}
			if !tc.rollback {
				return
			}
			halt, err := contract.ReadHalt(testKey, subject, v, time.Now())
			if err != nil {
				t.Fatalf("the rollback's halt does not verify for the workload: %v", err)
			}
			if halt.Reason != waves.RolledBack || len(halt.Changes) != 1 || halt.Changes[0].Source != "configmap/cfg" {
				t.Errorf("halt = %+v", halt)
			}
			ids, _ := waves.ContentIDs(testKey, pinningNS, []hasher.Reference{{Source: cfg}}, v2.Lookup(context.Background(), pinningNS))
			if halt.Changes[0].Content != ids["configmap/cfg"] {
				t.Errorf("the halt names %s, want the current content %s", halt.Changes[0], ids["configmap/cfg"])
			}
			if !strings.Contains(strings.Join(resp.Warnings, "\n"), "rolled back") {
				t.Errorf("warnings %v do not say it rolled back", resp.Warnings)
			}
		})
	}
}

// TestRollbackOnlyWhereItPins: without the namespace label, or without
// pinning at all, an undo is re-stamped as before and nothing is listed.
func TestRollbackOnlyWhereItPins(t *testing.T) {
	cfg := hasher.Source{Kind: hasher.ConfigMap, Name: "cfg"}
	v1, v2 := fakeSources{cfg: {"k": "v1"}}, fakeSources{cfg: {"k": "v2"}}
	old, current := stampOf(t, v1, deployment()), stampOf(t, v2, deployment())
	revs := &fakeRevisions{templates: []corev1.PodTemplateSpec{deployment(withStamp(old)).Spec.Template}, sealed: map[string]bool{old: true}}
	req := request(admissionv1.Update, deployment(withUID, withStamp(old)), deployment(withUID, withStamp(current)))

	h := newHandler(t, v2)
	h.Revisions = revs // served, but not labelled for pinning
	if got := answeredStampAnywhere(t, req, h.Handle(context.Background(), req)); got != current {
		t.Errorf("not pinning: stamp %q, want %q", got, current)
	}
	h = pinningHandler(t, v2, nil)
	h.Revisions = nil
	if got := answeredStampAnywhere(t, req, h.Handle(context.Background(), req)); got != current {
		t.Errorf("--pinning off: stamp %q, want %q", got, current)
	}
	// A write that keeps the stamp costs no live read.
	h = pinningHandler(t, v2, revs)
	same := request(admissionv1.Update, deployment(withUID, withStamp(current)), deployment(withUID, withStamp(current)))
	h.Handle(context.Background(), same)
	if revs.lists != 0 {
		t.Errorf("listed revisions %d times", revs.lists)
	}
}
