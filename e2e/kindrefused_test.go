//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/restamp"
	"github.com/confighash/confighash/internal/status"
)

// trimmedRolloutCRD is Argo Rollouts' Rollout as trimmed CRDs declare it:
// a root that keeps unknown fields and lists none.
const trimmedRolloutCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: rollouts.argoproj.io
spec:
  group: argoproj.io
  scope: Namespaced
  names: {plural: rollouts, singular: rollout, kind: Rollout, listKind: RolloutList, shortNames: [ro]}
  versions:
    - name: v1alpha1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// installCRD applies a CRD, waits until it is established and the apiserver
// publishes its OpenAPI schema for kind (a moment later; the start-up and
// the hook's checks read that schema), and removes it after the spec,
// waiting until it is gone: a CRD's deletion waits for its objects, and a
// next spec that applied the same CRD meanwhile would see it vanish.
func installCRD(t *testing.T, manifest, name string, gvk schema.GroupVersionKind) {
	t.Helper()
	env.Kubectl(t, manifest, "apply", "-f", "-")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		crd := &unstructured.Unstructured{}
		crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
		crd.SetName(name)
		if err := env.Client.Delete(ctx, crd); client.IgnoreNotFound(err) != nil {
			t.Errorf("deleting crd/%s: %v", name, err)
			return
		}
		err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			err := env.Client.Get(ctx, client.ObjectKey{Name: name}, crd)
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		if err != nil {
			t.Errorf("crd/%s still there a minute after its deletion: %v", name, err)
		}
	})
	env.Kubectl(t, "", "wait", "--for=condition=Established", "--timeout=60s", "crd/"+name)
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		paths, err := dc.OpenAPIV3().Paths()
		if err != nil {
			return false, nil //nolint:nilerr // the apiserver may not serve it yet: polled again
		}
		p, ok := paths["apis/"+gvk.GroupVersion().String()]
		if !ok {
			return false, nil
		}
		doc, err := p.Schema("application/json")
		return err == nil && bytes.Contains(doc, []byte(`"`+gvk.Kind+`"`)), nil
	})
	if err != nil {
		t.Fatalf("the %s schema was not published: %v", gvk.Kind, err)
	}
}

// workloadStatus runs confighash status -o json on one workload.
func workloadStatus(t *testing.T, target, ns string, flags ...string) status.Workload {
	t.Helper()
	r := runStatus(t, append([]string{target, "-n", ns, "-o", "json"}, flags...)...)
	var rep status.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("decoding status: %v (%v)\n%s%s", err, r.err, r.stdout, r.stderr)
	}
	if len(rep.Workloads) != 1 {
		t.Fatalf("status reports %d workloads, want 1:\n%s", len(rep.Workloads), r.stdout)
	}
	return rep.Workloads[0]
}

// TestTrimmedRolloutCRDIsWatched: a Rollout CRD whose schema keeps unknown
// fields at its root passes the hook's template-path check, so its Rollouts
// are re-stamped when their config changes (issue 13 section 10: they were
// stamped at create and never again).
func TestTrimmedRolloutCRDIsWatched(t *testing.T) {
	restartWith(t)
	installCRD(t, trimmedRolloutCRD, "rollouts.argoproj.io", framework.RolloutGVK)

	ns := env.NewNamespace(t, true)
	cm := settingsConfig(t, ns)
	spec := envFromSettings()
	ro := rolloutOf(ns, "trimmed", spec)
	createStamped(t, ro, spec)

	changeSettings(t, cm, ro, spec)

	if w := workloadStatus(t, "rollout/trimmed", ns); w.State != status.StateCurrent || w.NotWatched != "" {
		t.Errorf("status of the Rollout: %s (%s), want current", w.State, w.Reason)
	}
}

// TestRefusedKindIsLoud: a kind whose template path does not lead to a pod
// template in its CRD's schema (here to the template's pod spec), installed
// after confighash started, is refused by the hook: a
// KindNotWatched Warning Event on confighash's pod says so, and status
// reports its objects not-watched (exit 1), not current.
func TestRefusedKindIsLoud(t *testing.T) {
	// Out of cluster there is no pod; the Event names the one given.
	const pod = "confighash-e2e-pod"
	restartWith(t, widgetKindFlag("spec.template.spec"), "--pod-name="+pod, "--pod-uid=0b6f4c1e-0000-4000-8000-000000000001")
	installWidgetCRD(t)

	ns := env.NewNamespace(t, true)
	settingsConfig(t, ns)
	w := widget(ns, "gadget", envFromSettings())
	env.Create(t, w)

	var got []corev1.Event
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, restamp.ProbeInterval+20*time.Second, true, func(ctx context.Context) (bool, error) {
		l := &corev1.EventList{}
		if err := env.Client.List(ctx, l, client.InNamespace(framework.Namespace)); err != nil {
			return false, err
		}
		got = got[:0]
		for _, e := range l.Items {
			if e.Reason == contract.ReasonKindNotWatched && e.InvolvedObject.Kind == "Pod" && e.InvolvedObject.Name == pod {
				got = append(got, e)
			}
		}
		return len(got) > 0, nil
	})
	if err != nil {
		t.Fatalf("no %s Event on the pod: %v", contract.ReasonKindNotWatched, err)
	}
	if e := got[0]; e.Type != corev1.EventTypeWarning || !strings.Contains(e.Message, "Widget.e2e.confighash.dev") ||
		!strings.Contains(e.Message, "not a pod template") {
		t.Errorf("event %s %q does not name the kind and the field", e.Type, e.Message)
	}

	s := workloadStatus(t, "widget/gadget", ns, widgetKindFlag("spec.template.spec"))
	if s.State != status.StateNotWatched || !strings.Contains(s.Reason, "never re-stamped") {
		t.Errorf("status of the Widget: %s (%s), want not-watched", s.State, s.Reason)
	}
}
