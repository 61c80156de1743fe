package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"sync/atomic"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/sources"
)

// testOwnNamespace is where the test handler's confighash runs.
const testOwnNamespace = "confighash-system"

// namespaces is a Getter over namespaces given by name and labels.
type namespaces map[string]map[string]string

func (n namespaces) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	labels, ok := n[key.Name]
	if !ok {
		return apierrors.NewNotFound(corev1.Resource("namespaces"), key.Name)
	}
	ns := obj.(*corev1.Namespace)
	ns.Name, ns.Labels = key.Name, labels
	return nil
}

var injected = map[string]string{contract.InjectionLabel: contract.InjectionEnabled}

// testNamespaces are what the handler tests see: "ns" is served.
var testNamespaces = namespaces{"ns": injected}

// recordingSources counts lookups, to show the policy comes first.
type recordingSources struct {
	fakeSources
	lookups int
}

func (r *recordingSources) Lookup(ctx context.Context, ns string) hasher.Lookup {
	inner := r.fakeSources.Lookup(ctx, ns)
	return func(s hasher.Source) (hasher.Content, bool, error) {
		r.lookups++
		return inner(s)
	}
}

// secretReader reads key password of Secret db in namespace ns.
func secretReader(ns string) *appsv1.Deployment {
	return deployment(func(d *appsv1.Deployment) {
		d.Namespace = ns
		d.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "P", ValueFrom: &corev1.EnvVarSource{
			SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password"}}}}
	})
}

// post sends an AdmissionReview for a CREATE of obj to the endpoint's
// handler, as any caller who can reach the port can, and returns the
// response part.
func post(t *testing.T, h *Handler, obj client.Object) *admissionv1.AdmissionResponse {
	t.Helper()
	review := admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: types.UID("uid-" + obj.GetNamespace()), Operation: admissionv1.Create, Namespace: obj.GetNamespace(),
			Kind:     metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
			Resource: metav1.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
			Name:     obj.GetName(),
			Object:   runtime.RawExtension{Raw: mustJSON(obj)},
		},
	}
	rec := postReview(newReviews(&admission.Webhook{Handler: h}), mustJSON(review))
	if rec.Code != http.StatusOK {
		t.Fatalf("HTTP %d: %s", rec.Code, rec.Body)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
		t.Fatalf("decoding %s: %v", rec.Body, err)
	}
	return out.Response
}

// TestHandlerSaysNothingAboutUnservedNamespaces POSTs AdmissionReviews
// straight to the handler, as a pod that reaches the Service could, for
// namespaces the webhook configuration's selector keeps the apiserver from
// sending. Whether the Secret the Deployment reads exists or not, each gets
// the same answer: allowed, no patch, the one fixed message, no warning.
func TestHandlerSaysNothingAboutUnservedNamespaces(t *testing.T) {
	db := hasher.Source{Kind: hasher.Secret, Name: "db"}
	nss := namespaces{"shop": injected, "plain": nil, "kube-system": injected, testOwnNamespace: injected}
	want := &admissionv1.AdmissionResponse{Allowed: true, Result: &metav1.Status{Message: notServedMessage, Code: http.StatusOK}}
	tests := map[string]string{
		"unlabelled namespace":        "plain",
		"labelled kube-system":        "kube-system",
		"labelled confighash's own":   testOwnNamespace,
		"namespace that is not there": "nowhere",
	}
	for name, ns := range tests {
		t.Run(name, func(t *testing.T) {
			for secret, src := range map[string]fakeSources{
				"secret exists":  {db: {"password": "hunter2"}},
				"secret missing": {},
			} {
				rec := &recordingSources{fakeSources: src}
				h := newHandler(t, nil)
				h.Sources, h.Namespaces = rec, nss
				got := post(t, h, secretReader(ns))
				got.UID = ""
				if !reflect.DeepEqual(want, got) {
					t.Errorf("%s: answer\n%s\nwant\n%s", secret, mustJSON(got), mustJSON(want))
				}
				if rec.lookups != 0 {
					t.Errorf("%s: %d source lookups before the namespace policy said no", secret, rec.lookups)
				}
			}
		})
	}

	// The same request in a served namespace is stamped: the test would see
	// a patch if the policy let one through.
	h := newHandler(t, fakeSources{db: {"password": "hunter2"}})
	h.Namespaces = nss
	if got := post(t, h, secretReader("shop")); got.Patch == nil {
		t.Errorf("served namespace: no patch (%+v)", got.Result)
	}
}

func TestHandlerWithoutNamespaceReaderServesNothing(t *testing.T) {
	h := newHandler(t, fakeSources{{Kind: hasher.ConfigMap, Name: "cfg"}: {"k": "v"}})
	h.Namespaces = nil
	req := request(admissionv1.Create, deployment(), nil)
	if resp := h.Handle(context.Background(), req); len(resp.Patches) != 0 || resp.Result.Message != notServedMessage {
		t.Errorf("got %+v", resp)
	}
}

// Compile-time check that the test getter fits the handler.
var _ injection.Getter = namespaces{}

// A namespace the cache lacks costs one live GET per name and TTL, found
// or not, however many requests name it: anyone who reaches the port can
// name namespaces that do not exist, each of which used to cost a GET.
func TestHandlerRemembersNamespaceReads(t *testing.T) {
	for name, ns := range map[string]string{"missing": "nowhere", "found live only": "shop"} {
		t.Run(name, func(t *testing.T) {
			var gets atomic.Int64
			live := interceptor.NewClient(fake.NewClientBuilder().WithObjects(
				&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: injected}}).Build(),
				interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					gets.Add(1)
					return c.Get(ctx, key, obj, opts...)
				}})
			h := newHandler(t, fakeSources{})
			h.Namespaces = injection.CacheThenLive{Cache: namespaces{},
				Live: sources.NewRecentReads(live, sources.DefaultMissTTL, sources.DefaultRecentWeight, nil)}
			for range 20 {
				d := deployment(func(d *appsv1.Deployment) { d.Namespace = ns })
				req := request(admissionv1.Create, d, nil)
				req.Namespace = ns
				_ = h.Handle(context.Background(), req)
			}
			if got := gets.Load(); got != 1 {
				t.Errorf("%d live GETs of namespace %s for 20 requests, want 1", got, ns)
			}
		})
	}
}
