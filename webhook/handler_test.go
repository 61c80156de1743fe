package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/workload"
)

// fakeSources serves contents from a map; the handler's logic, not the
// cache, is under test here (e2e covers the cache on a real apiserver).
type fakeSources map[hasher.Source]map[string]string

func (f fakeSources) Lookup(_ context.Context, _ string) hasher.Lookup {
	return func(s hasher.Source) (hasher.Content, bool, error) {
		data, ok := f[s]
		if !ok {
			return hasher.Content{}, false, nil
		}
		c := hasher.Content{Data: map[string]hasher.Digest{}}
		for k, v := range data {
			c.Data[k] = hasher.DigestOf([]byte(v))
		}
		return c, true, nil
	}
}

var testKey = []byte("0123456789abcdef0123456789abcdef")

func newHandler(t testing.TB, src fakeSources) *Handler {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return &Handler{Key: testKey, Sources: src, Decoder: admission.NewDecoder(scheme),
		Policy: injection.New(testOwnNamespace), Namespaces: testNamespaces, Kinds: workload.Kinds()}
}

func deployment(mutate ...func(*appsv1.Deployment)) *appsv1.Deployment {
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "c", Image: "busybox",
				EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}}}}}},
		}}},
	}
	for _, m := range mutate {
		m(d)
	}
	return d
}

func withStamp(sum string) func(*appsv1.Deployment) {
	return func(d *appsv1.Deployment) {
		d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: sum}
	}
}

func withImage(img string) func(*appsv1.Deployment) {
	return func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = img }
}

func request(op admissionv1.Operation, obj, old client.Object) admission.Request {
	gvk := obj.GetObjectKind().GroupVersionKind()
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "uid-1", Operation: op, Namespace: "ns",
		Kind:   metav1.GroupVersionKind{Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind},
		Object: runtime.RawExtension{Raw: mustJSON(obj)},
	}}
	if old != nil {
		req.OldObject = runtime.RawExtension{Raw: mustJSON(old)}
	}
	return req
}

// byManager sets the field manager a write names, as the apiserver passes it
// in the request's options.
func byManager(manager string, req admission.Request) admission.Request {
	req.Options = runtime.RawExtension{Raw: mustJSON(metav1.PatchOptions{
		TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "PatchOptions"}, FieldManager: manager})}
	return req
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// patchedObject is the request's object with the response's patch applied.
func patchedObject(t *testing.T, req admission.Request, resp admission.Response) []byte {
	t.Helper()
	if len(resp.Patches) == 0 {
		return req.Object.Raw
	}
	p, err := jsonpatch.DecodePatch(mustJSON(resp.Patches))
	if err != nil {
		t.Fatalf("decoding patch: %v", err)
	}
	raw, err := p.Apply(req.Object.Raw)
	if err != nil {
		t.Fatalf("applying patch %s: %v", mustJSON(resp.Patches), err)
	}
	return raw
}

// answeredStamp applies the response's patch to the request object and returns
// the stamp it ends with, checking the patch touched nothing else.
func answeredStamp(t *testing.T, req admission.Request, resp admission.Response) string {
	t.Helper()
	kind, ok := workload.Kinds().Of(toGVK(req.Kind))
	if !ok {
		if len(resp.Patches) > 0 {
			t.Fatalf("patched an unknown kind")
		}
		return ""
	}
	for _, op := range resp.Patches {
		if !strings.HasPrefix(op.Path, kind.MetaPath+"/annotations") {
			t.Fatalf("patch touches %s, outside the stamp", op.Path)
		}
	}
	obj := kind.New()
	if err := json.Unmarshal(patchedObject(t, req, resp), obj); err != nil {
		t.Fatal(err)
	}
	tmpl, _ := kind.PodTemplate(obj)
	return tmpl.Checksum()
}

func TestHandle(t *testing.T) {
	cfg := hasher.Source{Kind: hasher.ConfigMap, Name: "cfg"}
	present := fakeSources{cfg: {"k": "v"}}
	changed := fakeSources{cfg: {"k": "v2"}}
	sum := func(src fakeSources) string {
		refs, _ := hasher.References(&deployment().Spec.Template.Spec, nil)
		r, err := hasher.Checksum(testKey, "ns", refs, src.Lookup(context.Background(), "ns"))
		if err != nil {
			t.Fatal(err)
		}
		return r.Checksum
	}
	current, stale := sum(present), sum(changed)

	tests := map[string]struct {
		src       fakeSources
		req       admission.Request
		wantStamp string
		wantPatch bool
		wantWarn  string
	}{
		"create stamps": {
			src: present, req: request(admissionv1.Create, deployment(), nil),
			wantStamp: current, wantPatch: true,
		},
		"create with other template annotations adds only ours": {
			src: present, req: request(admissionv1.Create, deployment(func(d *appsv1.Deployment) {
				d.Spec.Template.Annotations = map[string]string{"other": "x"}
			}), nil),
			wantStamp: current, wantPatch: true,
		},
		"create with the right stamp sends no patch": {
			src: present, req: request(admissionv1.Create, deployment(withStamp(current)), nil),
			wantStamp: current,
		},
		"create with a required source missing still stamps, and warns": {
			src: fakeSources{}, req: request(admissionv1.Create, deployment(), nil),
			wantStamp: sum(fakeSources{}), wantPatch: true, wantWarn: "required sources missing: configmap/cfg",
		},
		"replace without the annotation restores the stored stamp": {
			src: changed, req: request(admissionv1.Update, deployment(), deployment(withStamp(current))),
			wantStamp: current, wantPatch: true,
		},
		"re-apply with the stamp changes nothing, even if config moved on": {
			src: changed, req: request(admissionv1.Update, deployment(withStamp(current)), deployment(withStamp(current))),
			wantStamp: current,
		},
		"the hook's re-stamp passes through": {
			src: present, req: byManager(contract.FieldManager, request(admissionv1.Update, deployment(withStamp(stale)), deployment(withStamp(current)))),
			wantStamp: stale,
		},
		// confighash never writes v1; one arriving as a stamp-only write was
		// copied, maybe from another namespace, and must not get in.
		"a legacy v1 stamp under confighash's manager is undone": {
			src: present, req: byManager(contract.FieldManager, request(admissionv1.Update, deployment(withStamp(copiedV1)), deployment(withStamp(current)))),
			wantStamp: current, wantPatch: true, wantWarn: "kept the stored confighash.dev/checksum",
		},
		// Nothing compares a v1 stamp any more (see foreign): a stored one
		// is no stamp, so even a no-op write replaces it.
		"a stored legacy v1 stamp gives way to a fresh one on a no-op write": {
			src: changed, req: request(admissionv1.Update, deployment(), deployment(withStamp(copiedV1))),
			wantStamp: stale, wantPatch: true,
		},
		"create carrying a legacy v1 stamp gets a v2 stamp": {
			// Never kept on CREATE, even when it matches: the answer would
			// tell whether a v1 stamp copied from elsewhere fits this
			// namespace's content.
			src: present, req: request(admissionv1.Create, deployment(withStamp(copiedV1)), nil),
			wantStamp: current, wantPatch: true,
		},
		"the hook's first stamp of an unstamped workload passes through": {
			src: changed, req: byManager(contract.FieldManager, request(admissionv1.Update, deployment(withStamp(stale)), deployment())),
			wantStamp: stale,
		},
		"another manager's stamp-only change is undone, with a warning": {
			src: changed, req: byManager("argocd-controller", request(admissionv1.Update, deployment(withStamp("v1:copied-from-an-old-object")), deployment(withStamp(current)))),
			wantStamp: current, wantPatch: true, wantWarn: "kept the stored confighash.dev/checksum",
		},
		"a stamp-only change naming no manager is undone, with a warning": {
			src: present, req: request(admissionv1.Update, deployment(withStamp(stale)), deployment(withStamp(current))),
			wantStamp: current, wantPatch: true, wantWarn: "this write rolls nothing",
		},
		"another manager stamping an unstamped workload gets a fresh stamp": {
			src: present, req: byManager("kubectl-edit", request(admissionv1.Update, deployment(withStamp("v1:made-up")), deployment())),
			wantStamp: current, wantPatch: true,
		},
		"unstamped workload stays unstamped on a no-op write": {
			src: present, req: request(admissionv1.Update, deployment(), deployment()),
		},
		"template change computes a fresh stamp": {
			src: changed, req: request(admissionv1.Update, deployment(withImage("nginx"), withStamp(current)), deployment(withStamp(current))),
			wantStamp: stale, wantPatch: true,
		},
		"template change stamps an unstamped workload": {
			src: present, req: request(admissionv1.Update, deployment(withImage("nginx")), deployment()),
			wantStamp: current, wantPatch: true,
		},
		"template change with a required source missing keeps the old stamp": {
			src: fakeSources{}, req: request(admissionv1.Update, deployment(withImage("nginx")), deployment(withStamp(current))),
			wantStamp: current, wantPatch: true, wantWarn: "keeping the previous stamp",
		},
		"opt-out is left alone": {
			src: present, req: request(admissionv1.Create, deployment(func(d *appsv1.Deployment) {
				d.Annotations = map[string]string{contract.InjectionAnnotation: contract.InjectionDisabled}
			}), nil),
		},
		"malformed include is reported, the rest still stamped": {
			src: present, req: request(admissionv1.Create, deployment(func(d *appsv1.Deployment) {
				d.Annotations = map[string]string{contract.IncludeAnnotation: "deployment/x"}
			}), nil),
			wantStamp: current, wantPatch: true, wantWarn: "deployment/x",
		},
		"too many sources is allowed unchanged with a warning": {
			src: present, req: request(admissionv1.Create, deployment(func(d *appsv1.Deployment) {
				for i := range 500 {
					d.Spec.Template.Spec.Containers[0].Env = append(d.Spec.Template.Spec.Containers[0].Env, corev1.EnvVar{
						Name: fmt.Sprintf("E%d", i), ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
							LocalObjectReference: corev1.LocalObjectReference{Name: fmt.Sprintf("cm-%d", i)}, Key: "k"}},
					})
				}
			}), nil),
			wantWarn: "more than the limit",
		},
		"cronjob job template is stamped": {
			src: present, req: request(admissionv1.Create, &batchv1.CronJob{
				TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "CronJob"},
				ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns"},
				Spec: batchv1.CronJobSpec{JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
					Template: deployment().Spec.Template}}},
			}, nil),
			wantStamp: current, wantPatch: true,
		},
		"bare pod is stamped": {
			src: present, req: request(admissionv1.Create, &corev1.Pod{
				TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
				Spec:       deployment().Spec.Template.Spec,
			}, nil),
			wantStamp: current, wantPatch: true,
		},
		"pod owned by a controller is left alone": {
			src: present, req: request(admissionv1.Create, &corev1.Pod{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "rs", UID: "u", Controller: ptr.To(true)}}},
				Spec: deployment().Spec.Template.Spec,
			}, nil),
		},
		"job update is not handled": {
			src: present, req: request(admissionv1.Update, &batchv1.Job{
				TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
				ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "ns"},
				Spec:       batchv1.JobSpec{Template: deployment().Spec.Template},
			}, nil),
		},
		"unknown kind is allowed unchanged": {
			src: present, req: request(admissionv1.Create, &corev1.ConfigMap{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"}, ObjectMeta: metav1.ObjectMeta{Name: "x"}}, nil),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			resp := newHandler(t, tc.src).Handle(context.Background(), tc.req)
			if !resp.Allowed {
				t.Fatalf("denied: %v", resp.Result)
			}
			if got := len(resp.Patches) > 0; got != tc.wantPatch {
				t.Errorf("patch = %v (%s), want %v", got, mustJSON(resp.Patches), tc.wantPatch)
			}
			if got := answeredStamp(t, tc.req, resp); got != tc.wantStamp {
				t.Errorf("stamp = %q, want %q", got, tc.wantStamp)
			}
			warnings := strings.Join(resp.Warnings, "\n")
			if tc.wantWarn == "" && warnings != "" {
				t.Errorf("unexpected warnings: %s", warnings)
			}
			if !strings.Contains(warnings, tc.wantWarn) {
				t.Errorf("warnings %q lack %q", warnings, tc.wantWarn)
			}
			// confighash status keeps only what IsWarning recognises.
			for _, w := range resp.Warnings {
				if !workload.IsWarning(w) {
					t.Errorf("warning %q is not marked as confighash's", w)
				}
			}
		})
	}
}

func toGVK(k metav1.GroupVersionKind) schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}
}

func TestHandleCountsAnswers(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	cfg := hasher.Source{Kind: hasher.ConfigMap, Name: "cfg"}
	h := newHandler(t, fakeSources{cfg: {"k": "v"}})
	h.Metrics = m
	create := request(admissionv1.Create, deployment(), nil)
	stamped := answeredStamp(t, create, h.Handle(context.Background(), create))
	h.Handle(context.Background(), request(admissionv1.Update, deployment(), deployment(withStamp(stamped))))
	h.Handle(context.Background(), request(admissionv1.Update, deployment(withStamp(stamped)), deployment(withStamp(stamped))))
	for outcome, want := range map[outcome]float64{answerStamped: 1, answerRestored: 1, answerUnchanged: 1} {
		if got := testutil.ToFloat64(m.Answers.WithLabelValues(string(outcome))); got != want {
			t.Errorf("answers{%s} = %v, want %v", outcome, got, want)
		}
	}
	if got := testutil.ToFloat64(m.Checksums); got != 1 {
		t.Errorf("checksums = %v, want 1: only the CREATE computes one", got)
	}
}

// TestOutcomeIsDecidedNotRead checks the outcome, and the count, of each kind
// of answer, both restore paths included. Outcomes used to be read back from
// the answer's message, so rewording one restore answer would have counted
// it as stamped; now the outcome is returned with the answer.
func TestOutcomeIsDecidedNotRead(t *testing.T) {
	cfg := hasher.Source{Kind: hasher.ConfigMap, Name: "cfg"}
	h := newHandler(t, fakeSources{cfg: {"k": "v"}})
	create := request(admissionv1.Create, deployment(), nil)
	stamped := answeredStamp(t, create, h.Handle(context.Background(), create))
	other := answeredStamp(t, create, newHandler(t, fakeSources{cfg: {"k": "other"}}).Handle(context.Background(), create))
	undecodable := request(admissionv1.Create, deployment(), nil)
	undecodable.Object.Raw = []byte(`{"spec": 1}`)
	noUID := request(admissionv1.Create, deployment(), nil)
	noUID.UID = ""
	for _, tc := range []struct {
		name string
		req  admission.Request
		want outcome
	}{
		{"create", create, answerStamped},
		{"stamp dropped", request(admissionv1.Update, deployment(), deployment(withStamp(stamped))), answerRestored},
		{"stamp changed", request(admissionv1.Update, deployment(withStamp(other)), deployment(withStamp(stamped))), answerRestored},
		{"unchanged", request(admissionv1.Update, deployment(withStamp(stamped)), deployment(withStamp(stamped))), answerUnchanged},
		{"undecodable", undecodable, answerError},
		{"no uid", noUID, answerError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, got := h.handle(context.Background(), tc.req)
			if got != tc.want {
				t.Fatalf("outcome %q, want %q (answer %+v)", got, tc.want, resp.Result)
			}
			if resp.Allowed && (len(resp.Patches) > 0) != (got == answerStamped || got == answerRestored) {
				t.Errorf("outcome %q with %d patches", got, len(resp.Patches))
			}
			m := testMetrics(t)
			counted := *h
			counted.Metrics = m
			counted.Handle(context.Background(), tc.req)
			if n := testutil.ToFloat64(m.Answers.WithLabelValues(string(tc.want))); n != 1 {
				t.Errorf("answers{%s} = %v, want 1", tc.want, n)
			}
		})
	}
}
