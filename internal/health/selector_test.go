package health

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/workload"
)

func TestPodSelector(t *testing.T) {
	withSelector := func(sel any) *unstructured.Unstructured {
		u := cloneSet(nil)
		spec := u.Object["spec"].(map[string]any)
		if sel == nil {
			delete(spec, "selector")
		} else {
			spec["selector"] = sel
		}
		return u
	}
	matchExpr := map[string]any{"matchLabels": map[string]any{"app": "web"},
		"matchExpressions": []any{map[string]any{"key": "tier", "operator": "In", "values": []any{"front", "edge"}}}}
	for _, c := range []struct {
		name    string
		kind    workload.Kind
		obj     client.Object
		want    string // the selector's String(); "" for none
		wantErr bool
	}{
		{name: "deployment", kind: kindOf("Deployment"), obj: deploymentDone(), want: "app=web"},
		{name: "statefulset", kind: kindOf("StatefulSet"), obj: statefulSetDone(), want: "app=web"},
		{name: "daemonset", kind: kindOf("DaemonSet"), obj: daemonSetDone(), want: "app=web"},
		{name: "argo rollout", kind: kindOf("Rollout"), obj: argoHealthy(), want: "app=web"},
		{name: "cronjob has none", kind: kindOf("CronJob"), obj: cronJob()},
		{name: "a job is never re-stamped", kind: kindOf("Job"), obj: &batchv1.Job{Spec: batchv1.JobSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/controller-uid": "0f6b"}}}}},
		{name: "custom kind with match expressions", kind: cloneSetKind(), obj: withSelector(matchExpr), want: "app=web,tier in (edge,front)"},
		{name: "custom kind with a selector string", kind: cloneSetKind(), obj: withSelector("app=web,tier!=batch"), want: "app=web,tier!=batch"},
		{name: "custom kind without spec.selector", kind: cloneSetKind(), obj: withSelector(nil)},
		{name: "an empty selector would list the namespace", kind: cloneSetKind(), obj: withSelector(map[string]any{})},
		{name: "a bad operator", kind: cloneSetKind(), wantErr: true, obj: withSelector(map[string]any{
			"matchExpressions": []any{map[string]any{"key": "tier", "operator": "Near"}}})},
		{name: "a selector of another type", kind: cloneSetKind(), obj: withSelector(int64(3)), wantErr: true},
		{name: "a spec that is not an object", kind: cloneSetKind(), wantErr: true, obj: &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "spec": "web"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sel, ok, err := PodSelector(c.kind, c.obj)
			if (err != nil) != c.wantErr {
				t.Fatalf("PodSelector error = %v, want error %v", err, c.wantErr)
			}
			if ok != (c.want != "") {
				t.Fatalf("PodSelector ok = %v (%v), want %v", ok, sel, c.want != "")
			}
			if !ok {
				return
			}
			if sel.String() != c.want {
				t.Errorf("PodSelector = %q, want %q", sel.String(), c.want)
			}
			if !sel.Matches(labels.Set{"app": "web", "tier": "front"}) {
				t.Errorf("PodSelector %q does not match the workload's pods", sel)
			}
		})
	}
}
