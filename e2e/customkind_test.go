//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/confighash/confighash/cmd/confighash/app"
	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/status"
)

// widgetCRD is a small custom resource with a pod template and no
// controller, as an in-house operator's would be. Its schema lists the
// template's fields down to spec.containers, so the start-up check has
// something to check a path against; a status (no subresource) lets a spec
// play the operator that reports it.
const widgetCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.e2e.confighash.dev
spec:
  group: e2e.confighash.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                replicas: {type: integer}
                template:
                  type: object
                  properties:
                    metadata: {type: object, x-kubernetes-preserve-unknown-fields: true}
                    spec:
                      type: object
                      x-kubernetes-preserve-unknown-fields: true
                      properties:
                        containers:
                          type: array
                          items: {type: object, x-kubernetes-preserve-unknown-fields: true}
            status: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

var widgetGVK = schema.GroupVersionKind{Group: "e2e.confighash.dev", Version: "v1", Kind: "Widget"}

func widgetKindFlag(template string) string {
	return "--workload-kind=group=e2e.confighash.dev,version=v1,kind=Widget,resource=widgets,template=" + template
}

// installWidgetCRD installs the CRD and waits until its schema is
// published (installCRD); it is removed after the spec.
func installWidgetCRD(t *testing.T) {
	t.Helper()
	installCRD(t, widgetCRD, "widgets.e2e.confighash.dev", widgetGVK)
}

func widget(ns, name string, spec corev1.PodSpec) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(widgetGVK)
	u.SetNamespace(ns)
	u.SetName(name)
	podSpec, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&spec)
	if err != nil {
		panic(err)
	}
	// No metadata in the template: the webhook's patch must create it.
	u.Object["spec"] = map[string]any{"replicas": int64(1), "template": map[string]any{"spec": podSpec}}
	return u
}

// TestCustomKindStampedAndRestamped: a kind configured with --workload-kind,
// whose CRD is installed only after confighash started, is stamped at
// admission, re-stamped once per config change by the hook once it notices
// the CRD, and a re-apply rolls nothing.
func TestCustomKindStampedAndRestamped(t *testing.T) {
	restartWith(t, widgetKindFlag("spec.template"))
	installWidgetCRD(t)

	ns := env.NewNamespace(t, true)
	cm := settingsConfig(t, ns)
	spec := envFromSettings()
	w := widget(ns, "gadget", spec)
	createStamped(t, w, spec)

	// The hook looks for the CRD every ProbeInterval; it then watches the
	// kind, and a change reaches the Widget.
	changeSettings(t, cm, w, spec)
	if n := len(eventsAtLeast(t, ns, "gadget", contract.ReasonConfigChanged, 1)); n != 1 {
		t.Errorf("%d ConfigChanged events, want 1", n)
	}

	// Watched now: the next change is re-stamped within the window.
	env.Update(t, cm, func() { cm.Data["mode"] = "three" })
	want3 := expectedChecksum(t, ns, &spec, nil)
	waitStamp(t, w, want3, 10*time.Second)

	// confighash status, told the same --workload-kind, reports it current.
	r := runStatus(t, "widget/gadget", "-n", ns, "-o", "json", widgetKindFlag("spec.template"))
	if r.err != nil {
		t.Fatalf("status: %v", r.err)
	}
	var rep status.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("decoding status: %v\n%s", err, r.stdout)
	}
	if len(rep.Workloads) != 1 || rep.Workloads[0].State != status.StateCurrent || rep.Workloads[0].StampedChecksum != want3 {
		t.Errorf("status of the Widget: %+v, want one current workload stamped %q", rep.Workloads, want3)
	}

	// A re-apply of the manifest as written (no stamp) keeps the stamp.
	again := widget(ns, "gadget", spec)
	again.SetResourceVersion(w.GetResourceVersion())
	if err := env.Client.Update(env.SpecContext(t), again); err != nil {
		t.Fatal(err)
	}
	time.Sleep(settle)
	if got := env.StampOf(t, w); got != want3 {
		t.Errorf("after a re-apply the stamp is %q, want %q kept", got, want3)
	}
	if n := len(events(t, ns, "gadget", contract.ReasonConfigChanged)); n != 2 {
		t.Errorf("%d ConfigChanged events after two changes and a re-apply, want 2", n)
	}
}

// TestCustomKindBadPathIsAStartUpError: with the CRD installed, a template
// path that is not in its schema stops confighash before it serves or
// writes anything, and says which field is wrong.
func TestCustomKindBadPathIsAStartUpError(t *testing.T) {
	installWidgetCRD(t)
	for name, tc := range map[string]struct {
		template, want string
	}{
		"no such field":       {template: "spec.podTemplate", want: `no field "podTemplate" under spec`},
		"not a pod template":  {template: "spec.template.spec", want: "not a pod template"},
		"not even the object": {template: "spec.replicas", want: "spec.replicas"},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(env.SpecContext(t), time.Minute)
			defer cancel()
			// A free port, though the check fails before anything listens.
			ports, err := controlplane.FreePorts(1)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err = app.Run(ctx, []string{"serve", "--kubeconfig", env.Kubeconfig, "--namespace", framework.Namespace,
				"--cert-mode", "external", "--metrics-bind-address", "0", "--health-probe-bind-address", "0", "--webhook-port", strconv.Itoa(ports[0]),
				widgetKindFlag(tc.template)}, &out, &out)
			if err == nil {
				t.Fatal("confighash started with a template path that is not in the CRD's schema")
			}
			msg := fmt.Sprint(err)
			if !strings.Contains(msg, tc.want) || !strings.Contains(msg, "Widget") {
				t.Errorf("error %q does not say %q about Widget", msg, tc.want)
			}
		})
	}
}

// TestCustomKindInWaves: Widgets in waves, judged by their status
// conditions (kstatus). The canary's "operator" (the spec) reports
// Reconciling, so its rollout is still going and the Widgets behind it
// keep their stamp; it then reports Stalled, which fails the rollout and
// halts the change, with RolloutHalted on the canary and the ConfigMap.
// Waves off on the source pushes the change to the others.
func TestCustomKindInWaves(t *testing.T) {
	installWidgetCRD(t)
	restartWith(t, widgetKindFlag("spec.template"), "--max-wave-size=4", "--rollout-soak=0s")
	ns := env.NewNamespace(t, true)
	cm := settingsConfig(t, ns)
	spec := envFromSettings()
	canary := widget(ns, "canary", spec)
	canary.SetAnnotations(map[string]string{contract.RolloutOrderAnnotation: "-1"})
	// As its operator would report a rollout it is still carrying out. A
	// custom kind with no status at all is judged done at once.
	canary.Object["status"] = map[string]any{"conditions": []any{map[string]any{
		"type": "Reconciling", "status": "True", "reason": "RollingOut", "message": "rolling"}}}
	env.Create(t, canary)
	var rest []*unstructured.Unstructured
	for _, n := range []string{"w1", "w2"} {
		w := widget(ns, n, spec)
		env.Create(t, w)
		rest = append(rest, w)
	}
	before := env.StampOf(t, rest[0])

	want := changeSettings(t, cm, canary, spec)
	time.Sleep(settle)
	for _, w := range rest {
		if env.StampOf(t, w) != before {
			t.Errorf("%s was re-stamped while the canary reported Reconciling", w.GetName())
		}
	}

	env.Update(t, canary, func() {
		canary.Object["status"] = map[string]any{"conditions": []any{map[string]any{
			"type": "Stalled", "status": "True", "reason": "BadConfig", "message": "the operator gave up"}}}
	})
	var halt string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		env.StampOf(t, canary) // reads it afresh
		halt = canary.GetAnnotations()[contract.HaltAnnotation]
		return halt != "", nil
	})
	if err != nil {
		t.Fatal("a Stalled canary did not halt the change")
	}
	if h, err := contract.ParseHalt(halt); err != nil || h.Reason != "BadConfig" {
		t.Errorf("halt %q: %+v %v, want reason BadConfig (the Stalled condition's)", halt, h, err)
	}
	for _, name := range []string{"canary", "settings"} {
		if evs := events(t, ns, name, contract.ReasonRolloutHalted); len(evs) == 0 || evs[0].Type != corev1.EventTypeWarning {
			t.Errorf("no RolloutHalted warning on %s: %v", name, evs)
		}
	}
	for _, w := range rest {
		if env.StampOf(t, w) != before {
			t.Errorf("%s was re-stamped although the change was halted", w.GetName())
		}
	}

	env.Update(t, cm, func() { cm.Annotations = map[string]string{contract.WavesAnnotation: contract.WavesOff} })
	for _, w := range rest {
		waitStamp(t, w, want, 30*time.Second)
	}
}
