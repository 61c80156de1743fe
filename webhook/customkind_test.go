package webhook

import (
	"context"
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/confighash/confighash/internal/workload"
)

// rollout is an Argo Rollout reading ConfigMap cfg; meta says whether its
// template has a metadata field at all.
func rollout(meta bool) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"})
	u.SetNamespace("ns")
	u.SetName("app")
	tmpl := map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
		"name": "c", "image": "busybox", "envFrom": []any{map[string]any{"configMapRef": map[string]any{"name": "cfg"}}}}}}}
	if meta {
		tmpl["metadata"] = map[string]any{"labels": map[string]any{"app": "web"}}
	}
	u.Object["spec"] = map[string]any{"replicas": int64(2), "template": tmpl}
	return u
}

// TestHandleCustomKind: a custom kind (Argo Rollouts' Rollout) is stamped
// through a patch that applies to the object as sent, whether or not its
// template has metadata, and re-applying it keeps the stamp. A Rollout that
// reads a Deployment's template has nothing to stamp.
func TestHandleCustomKind(t *testing.T) {
	h := newHandler(t, fakeSources{{Kind: "ConfigMap", Name: "cfg"}: {"a": "1"}})
	ctx := context.Background()
	ro, _ := workload.Kinds().Of(schema.GroupVersionKind{Group: "argoproj.io", Version: "v1alpha1", Kind: "Rollout"})

	stamped := map[bool]string{}
	for _, meta := range []bool{true, false} {
		obj := rollout(meta)
		req := request(admissionv1.Create, obj, nil)
		resp := h.Handle(ctx, req)
		if !resp.Allowed || len(resp.Patches) != 1 {
			t.Fatalf("meta=%v: answer %+v, want one patch", meta, resp)
		}
		p, err := jsonpatch.DecodePatch(mustJSON(resp.Patches))
		if err != nil {
			t.Fatal(err)
		}
		raw, err := p.Apply(req.Object.Raw)
		if err != nil {
			t.Fatalf("meta=%v: the patch %s does not apply: %v", meta, mustJSON(resp.Patches), err)
		}
		got := &unstructured.Unstructured{}
		if err := json.Unmarshal(raw, &got.Object); err != nil {
			t.Fatal(err)
		}
		tmpl, ok := ro.PodTemplate(got)
		if !ok || tmpl.Checksum() == "" {
			t.Fatalf("meta=%v: no stamp after the patch: %s", meta, raw)
		}
		if meta && tmpl.Meta.Labels["app"] != "web" {
			t.Errorf("the patch lost the template's labels: %s", raw)
		}
		stamped[meta] = tmpl.Checksum()

		// A re-apply of the manifest, without the stamp, gets it back.
		again := h.Handle(ctx, request(admissionv1.Update, rollout(meta), got))
		p, err = jsonpatch.DecodePatch(mustJSON(again.Patches))
		if err != nil {
			t.Fatal(err)
		}
		raw, err = p.Apply(mustJSON(rollout(meta)))
		if err != nil {
			t.Fatalf("re-apply patch does not apply: %v", err)
		}
		back := &unstructured.Unstructured{}
		_ = json.Unmarshal(raw, &back.Object)
		if bt, _ := ro.PodTemplate(back); bt.Checksum() != stamped[meta] {
			t.Errorf("meta=%v: re-apply ends on %q, want %q kept", meta, bt.Checksum(), stamped[meta])
		}
	}
	if stamped[true] != stamped[false] {
		t.Errorf("labels changed the stamp: %q vs %q", stamped[true], stamped[false])
	}

	ref := rollout(true)
	unstructured.RemoveNestedField(ref.Object, "spec", "template")
	ref.Object["spec"].(map[string]any)["workloadRef"] = map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}
	if resp := h.Handle(ctx, request(admissionv1.Create, ref, nil)); !resp.Allowed || len(resp.Patches) != 0 {
		t.Errorf("workloadRef Rollout: %+v, want allowed without a patch", resp)
	}
}
