package deploy

import (
	"fmt"
	"slices"
	"testing"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	kjson "sigs.k8s.io/json"

	"github.com/confighash/confighash/cmd/confighash/app"
)

// scheme knows every kind the manifests may contain.
var scheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := cmapi.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// clusterScoped are the cluster-scoped kinds the manifests may contain.
var clusterScoped = map[string]bool{
	"Namespace": true, "ClusterRole": true, "ClusterRoleBinding": true, "MutatingWebhookConfiguration": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
}

// decodeStrict decodes u into a typed object, failing on unknown or
// mis-cased fields and duplicate keys: the typos kustomize and helm let
// through.
func decodeStrict(u *unstructured.Unstructured, into runtime.Object) error {
	data, err := u.MarshalJSON()
	if err != nil {
		return err
	}
	strict, err := kjson.UnmarshalStrict(data, into)
	if err != nil {
		return err
	}
	if len(strict) > 0 {
		return fmt.Errorf("%v", strict)
	}
	return nil
}

// rendered is one render decoded into typed objects.
type rendered struct {
	Render
	Namespace  *corev1.Namespace
	SA         *corev1.ServiceAccount
	Deployment *appsv1.Deployment
	Container  *corev1.Container
	Service    *corev1.Service
	PDB        *policyv1.PodDisruptionBudget
	MWC        *admissionregistrationv1.MutatingWebhookConfiguration
	Roles      []*rbacv1.Role
	RoleBinds  []*rbacv1.RoleBinding
	CRoles     []*rbacv1.ClusterRole
	CRoleBinds []*rbacv1.ClusterRoleBinding
	Certs      []*cmapi.Certificate
	Issuers    []*cmapi.Issuer
	NetPols    []*networkingv1.NetworkPolicy
	Policies   []*admissionregistrationv1.ValidatingAdmissionPolicy
	PolBinds   []*admissionregistrationv1.ValidatingAdmissionPolicyBinding
}

// singular are the kinds of which a render must have exactly one.
var singular = []string{"Namespace", "ServiceAccount", "Deployment", "Service", "PodDisruptionBudget", "MutatingWebhookConfiguration"}

// decode types every object of r, failing the test on unknown kinds and
// invalid fields, and unless there is exactly one of each singular kind.
func decode(t *testing.T, r Render) *rendered {
	t.Helper()
	out := &rendered{Render: r}
	count := map[string]int{}
	for _, u := range r.Objects {
		key := Key(u)
		obj, err := scheme.New(u.GroupVersionKind())
		if err != nil {
			t.Errorf("%s: %s: unknown kind: %v", r.Name, key, err)
			continue
		}
		if err := decodeStrict(u, obj); err != nil {
			t.Errorf("%s: %s: %v", r.Name, key, err)
			continue
		}
		count[u.GetKind()]++
		switch o := obj.(type) {
		case *corev1.Namespace:
			out.Namespace = o
		case *corev1.ServiceAccount:
			out.SA = o
		case *appsv1.Deployment:
			out.Deployment = o
		case *corev1.Service:
			out.Service = o
		case *policyv1.PodDisruptionBudget:
			out.PDB = o
		case *admissionregistrationv1.MutatingWebhookConfiguration:
			out.MWC = o
		case *rbacv1.Role:
			out.Roles = append(out.Roles, o)
		case *rbacv1.RoleBinding:
			out.RoleBinds = append(out.RoleBinds, o)
		case *rbacv1.ClusterRole:
			out.CRoles = append(out.CRoles, o)
		case *rbacv1.ClusterRoleBinding:
			out.CRoleBinds = append(out.CRoleBinds, o)
		case *cmapi.Certificate:
			out.Certs = append(out.Certs, o)
		case *cmapi.Issuer:
			out.Issuers = append(out.Issuers, o)
		case *networkingv1.NetworkPolicy:
			out.NetPols = append(out.NetPols, o)
		case *admissionregistrationv1.ValidatingAdmissionPolicy:
			out.Policies = append(out.Policies, o)
		case *admissionregistrationv1.ValidatingAdmissionPolicyBinding:
			out.PolBinds = append(out.PolBinds, o)
		default:
			t.Errorf("%s: %s: a kind the tests do not know; add checks for it", r.Name, key)
		}
	}
	for _, kind := range singular {
		if count[kind] != 1 {
			t.Fatalf("%s: %d objects of kind %s rendered, want 1", r.Name, count[kind], kind)
		}
	}
	if n := len(out.Deployment.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("%s: the Deployment has %d containers, want 1", r.Name, n)
	}
	out.Container = &out.Deployment.Spec.Template.Spec.Containers[0]
	return out
}

func decodedRenders(t *testing.T) []*rendered {
	t.Helper()
	rs, _ := allRenders(t)
	// Namespaced mode and pinning are held to every check of the
	// manifests too.
	rs = append(slices.Clone(rs), namespacedRenders(t)...)
	rs = append(rs, pinningRenders(t)...)
	// And the chart's workloadKinds, whose rules and grants follow the list.
	_, p := allRenders(t)
	custom, err := RenderCustomKinds(p)
	if err != nil {
		t.Fatal(err)
	}
	rs = append(rs, custom...)
	out := make([]*rendered, 0, len(rs))
	for _, r := range rs {
		out = append(out, decode(t, r))
	}
	return out
}

// TestObjectsAreValid decodes every rendered object strictly into its Go
// type and checks where it is placed.
func TestObjectsAreValid(t *testing.T) {
	for _, r := range decodedRenders(t) {
		for _, u := range r.Objects {
			ns := u.GetNamespace()
			switch {
			case clusterScoped[u.GetKind()] && ns != "":
				t.Errorf("%s: %s is cluster-scoped but has namespace %q", r.Name, Key(u), ns)
			case (u.GetKind() == "Role" || u.GetKind() == "RoleBinding") && slices.Contains(r.Namespaces, ns):
				// Namespaced mode: the grants in each served namespace.
			case u.GetKind() == "RoleBinding" && u.GetName() == app.PinnerRole && slices.Contains(r.PinNamespaces, ns):
				// Pinning: the pinner's binding in each pinning namespace.
			case !clusterScoped[u.GetKind()] && ns != Namespace:
				t.Errorf("%s: %s is in namespace %q, want %q", r.Name, Key(u), ns, Namespace)
			}
			if u.GetLabels()["app.kubernetes.io/name"] != "confighash" {
				t.Errorf("%s: %s lacks the label app.kubernetes.io/name=confighash", r.Name, Key(u))
			}
		}
		if r.Namespace.Name != Namespace {
			t.Errorf("%s: Namespace %q, want %q", r.Name, r.Namespace.Name, Namespace)
		}
		if got := r.Namespace.Labels["pod-security.kubernetes.io/enforce"]; got != "restricted" {
			t.Errorf("%s: Namespace enforces Pod Security %q, want restricted", r.Name, got)
		}
	}
}
