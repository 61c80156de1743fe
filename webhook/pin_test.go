package webhook

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/pinner"
	"github.com/confighash/confighash/internal/pinning"
)

// fakePinner answers every pod with res and records the calls.
type fakePinner struct {
	res    pinner.Result
	calls  int
	dryRun bool
}

func (f *fakePinner) Pin(_ context.Context, _ *corev1.Pod, dryRun bool) pinner.Result {
	f.calls++
	f.dryRun = dryRun
	return f.res
}

var pinningNamespaces = namespaces{
	"pins":  {contract.InjectionLabel: contract.InjectionEnabled, pinning.NamespaceLabel: pinning.NamespaceEnabled},
	"plain": {contract.InjectionLabel: contract.InjectionEnabled},
	"off":   {pinning.NamespaceLabel: pinning.NamespaceEnabled},
}

func pinHandler(p *fakePinner) *PinHandler {
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	return &PinHandler{Decoder: admission.NewDecoder(scheme), Policy: injection.New(testOwnNamespace), Namespaces: pinningNamespaces, Pinner: p}
}

func podRequest(t *testing.T, ns string, dryRun bool) admission.Request {
	t.Helper()
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: "web-", Annotations: map[string]string{contract.ChecksumAnnotation: "v2:x:y"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", EnvFrom: []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}},
		}}}},
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: types.UID("u"), Namespace: ns, Operation: admissionv1.Create, DryRun: &dryRun,
		Kind:   metav1.GroupVersionKind{Version: "v1", Kind: "Pod"},
		Object: runtime.RawExtension{Raw: raw},
	}}
}

var appSource = hasher.Source{Kind: hasher.ConfigMap, Name: "app"}

func pinnedResult(held hasher.Reference) pinner.Result {
	return pinner.Result{
		Snapshots: map[hasher.Source]string{appSource: "app-pin-0123"},
		Held:      map[hasher.Source]hasher.Reference{appSource: held},
	}
}

func TestPinHandlerRewritesOnlyTheNamesAndSaysSo(t *testing.T) {
	p := &fakePinner{res: pinnedResult(hasher.Reference{Source: appSource, AllKeys: true, EnvOnly: true})}
	resp := pinHandler(p).Handle(context.Background(), podRequest(t, "pins", false))
	if !resp.Allowed || p.calls != 1 || p.dryRun {
		t.Fatalf("allowed %v, calls %d, dry run %v", resp.Allowed, p.calls, p.dryRun)
	}
	got := map[string]any{}
	for _, op := range resp.Patches {
		got[op.Operation+" "+op.Path] = op.Value
	}
	want := map[string]any{
		"replace /spec/containers/0/envFrom/0/configMapRef/name": "app-pin-0123",
		"add /metadata/annotations/confighash.dev~1pinned":       "true",
	}
	if len(got) != len(want) {
		t.Fatalf("patch %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("patch %v, want %v", got, want)
		}
	}
}

func TestPinHandlerAdmitsUnpinnedAndSaysWhy(t *testing.T) {
	cases := map[string]struct {
		pinner *fakePinner
		ns     string
		dryRun bool
		calls  int
		want   string // the annotation; "" for no patch at all
	}{
		"pinner refuses":   {&fakePinner{res: pinner.Result{Reason: pinner.ContentMovedOn}}, "pins", false, 1, "false: content-moved-on"},
		"dry run":          {&fakePinner{res: pinner.Result{Reason: pinner.DryRun}}, "pins", true, 1, "false: dry-run"},
		"pod reads more":   {&fakePinner{res: pinnedResult(hasher.Reference{Source: appSource, Keys: []string{"a"}, EnvOnly: true})}, "pins", false, 1, "false: not-covered"},
		"no pinning label": {&fakePinner{}, "plain", false, 0, ""},
		"not served":       {&fakePinner{}, "off", false, 0, ""},
		"no namespace":     {&fakePinner{}, "gone", false, 0, ""},
		"own namespace":    {&fakePinner{}, testOwnNamespace, false, 0, ""},
	}
	for name, c := range cases {
		resp := pinHandler(c.pinner).Handle(context.Background(), podRequest(t, c.ns, c.dryRun))
		if !resp.Allowed || c.pinner.calls != c.calls || c.pinner.dryRun != c.dryRun {
			t.Errorf("%s: allowed %v, calls %d, dry run %v", name, resp.Allowed, c.pinner.calls, c.pinner.dryRun)
			continue
		}
		if c.want == "" {
			if len(resp.Patches) != 0 {
				t.Errorf("%s: patched %v", name, resp.Patches)
			}
			continue
		}
		if len(resp.Patches) != 1 || resp.Patches[0].Value != c.want {
			t.Errorf("%s: patch %v, want only the annotation %q", name, resp.Patches, c.want)
		}
	}
}

func TestPinHandlerAnswersOnlyAcceptedCallers(t *testing.T) {
	p := &fakePinner{res: pinnedResult(hasher.Reference{Source: appSource, AllKeys: true, EnvOnly: true})}
	h := pinHandler(p)
	h.Callers = &Callers{}
	resp := h.Handle(context.Background(), podRequest(t, "pins", false))
	if !resp.Allowed || p.calls != 0 || len(resp.Patches) != 0 {
		t.Errorf("an unaccepted caller got %v after %d pins", resp, p.calls)
	}
}

func TestPinHandlerCountsPodsByResult(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	pinned := pinnedResult(hasher.Reference{Source: appSource, AllKeys: true, EnvOnly: true})
	pinned.Writes = 2
	for _, p := range []*fakePinner{
		{res: pinned},
		{res: pinner.Result{Reason: pinner.LookAlike}},
		// A write made before the pinner gave up still counts.
		{res: pinner.Result{Reason: pinner.LookAlike, Writes: 1}},
	} {
		h := pinHandler(p)
		h.Metrics = m
		h.Handle(context.Background(), podRequest(t, "pins", false))
	}
	if got := testutil.ToFloat64(m.Pods.WithLabelValues("pinned")); got != 1 {
		t.Errorf("pinned %v, want 1", got)
	}
	if got := testutil.ToFloat64(m.Pods.WithLabelValues("look_alike")); got != 2 {
		t.Errorf("look-alike %v, want 2", got)
	}
	if got := testutil.ToFloat64(m.SnapshotWrites); got != 3 {
		t.Errorf("snapshot writes %v, want 3", got)
	}
}

// TestPinCalledAgainUnpinsWhole: the pod webhook is called again when a
// later webhook changes the pod (reinvocationPolicy IfNeeded). If that one
// added a container reading more of a pinned source than its snapshot
// holds, the pod cannot be pinned, and the names the first call pointed at
// the snapshot go back too: every container reads the live object, as the
// pod's annotation says.
func TestPinCalledAgainUnpinsWhole(t *testing.T) {
	held := hasher.Reference{Source: appSource, Keys: []string{"level"}, EnvOnly: true}
	h := pinHandler(&fakePinner{res: pinnedResult(held)})
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: "web-", Annotations: map[string]string{contract.ChecksumAnnotation: "v2:x:y"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Env: []corev1.EnvVar{{Name: "LEVEL", ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}, Key: "level"}}}}}}},
	}
	call := func(pod *corev1.Pod) *corev1.Pod {
		t.Helper()
		raw, err := json.Marshal(pod)
		if err != nil {
			t.Fatal(err)
		}
		req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
			UID: types.UID("u"), Namespace: "pins", Operation: admissionv1.Create,
			Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Object: runtime.RawExtension{Raw: raw},
		}}
		out := &corev1.Pod{}
		if err := json.Unmarshal(patchedObject(t, req, h.Handle(context.Background(), req)), out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	first := call(pod)
	if got := first.Spec.Containers[0].Env[0].ValueFrom.ConfigMapKeyRef.Name; got != "app-pin-0123" || first.Annotations[pinning.PodAnnotation] != "true" {
		t.Fatalf("first call: container reads %q, annotation %q", got, first.Annotations[pinning.PodAnnotation])
	}

	// Another webhook adds a sidecar reading the whole ConfigMap.
	first.Spec.Containers = append(first.Spec.Containers, corev1.Container{Name: "sidecar", EnvFrom: []corev1.EnvFromSource{
		{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}}}})
	final := call(first)
	if got := final.Annotations[pinning.PodAnnotation]; got != "false: "+string(pinner.NotCovered) {
		t.Fatalf("annotation %q after the sidecar", got)
	}
	app := final.Spec.Containers[0].Env[0].ValueFrom.ConfigMapKeyRef.Name
	side := final.Spec.Containers[1].EnvFrom[0].ConfigMapRef.Name
	if app != "app" || side != "app" {
		t.Errorf("unpinned pod: app reads %q, sidecar %q; want both on the live %q", app, side, "app")
	}
}

// A pod that, on the first call, reads a snapshot by its name itself (and
// more of a pinned source than the snapshot holds) keeps reading it: only
// the names an earlier call of this webhook rewrote go back.
func TestPinFirstCallLeavesTheNamesAPodChose(t *testing.T) {
	held := hasher.Reference{Source: appSource, Keys: []string{"level"}, EnvOnly: true}
	h := pinHandler(&fakePinner{res: pinnedResult(held)})
	pod := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: "web-", Annotations: map[string]string{contract.ChecksumAnnotation: "v2:x:y"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", EnvFrom: []corev1.EnvFromSource{
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}}},
			{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app-pin-0123"}}},
		}}}},
	}
	raw, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: types.UID("u"), Namespace: "pins", Operation: admissionv1.Create,
		Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Pod"}, Object: runtime.RawExtension{Raw: raw},
	}}
	out := &corev1.Pod{}
	if err := json.Unmarshal(patchedObject(t, req, h.Handle(context.Background(), req)), out); err != nil {
		t.Fatal(err)
	}
	from := out.Spec.Containers[0].EnvFrom
	if got := out.Annotations[pinning.PodAnnotation]; got != "false: "+string(pinner.NotCovered) {
		t.Fatalf("annotation %q", got)
	}
	if from[0].ConfigMapRef.Name != "app" || from[1].ConfigMapRef.Name != "app-pin-0123" {
		t.Errorf("the pod reads %q and %q; want what it named, app and app-pin-0123", from[0].ConfigMapRef.Name, from[1].ConfigMapRef.Name)
	}
}
