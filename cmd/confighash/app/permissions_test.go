package app

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/certs"
	"github.com/confighash/confighash/internal/hashkey"
	"github.com/confighash/confighash/internal/serversettings"
	"github.com/confighash/confighash/internal/workload"
)

// sent is one request a component sent, as RBAC sees it.
type sent struct {
	group, resource, verb, namespace, name string
}

func (s sent) String() string {
	return fmt.Sprintf("%s %s.%s ns=%q name=%q", s.verb, s.resource, s.group, s.namespace, s.name)
}

// recorder wraps a fake client and records every request made through it.
type recorder struct {
	mu   sync.Mutex
	sent []sent
}

// client returns the recording client and the fake client behind it, for
// test set-up that must not be recorded.
func (r *recorder) client(t *testing.T, objs ...client.Object) (client.Client, client.Client) {
	t.Helper()
	base := fake.NewClientBuilder().WithObjects(objs...).Build()
	note := func(c client.WithWatch, obj runtime.Object, verb, ns, name string) {
		gvk, err := apiutil.GVKForObject(obj, c.Scheme())
		if err != nil {
			t.Fatalf("kind of %T: %v", obj, err)
		}
		gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
		// The guess is right for every kind these components touch.
		res, _ := meta.UnsafeGuessKindToResource(gvk)
		r.mu.Lock()
		defer r.mu.Unlock()
		r.sent = append(r.sent, sent{group: gvk.Group, resource: res.Resource, verb: verb, namespace: ns, name: name})
	}
	return interceptor.NewClient(base, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			note(c, obj, "get", key.Namespace, key.Name)
			return c.Get(ctx, key, obj, opts...)
		},
		List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
			note(c, list, "list", "", "")
			return c.List(ctx, list, opts...)
		},
		Watch: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) (watch.Interface, error) {
			note(c, list, "watch", "", "")
			return c.Watch(ctx, list, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			note(c, obj, "create", obj.GetNamespace(), "") // authorization sees no name on create
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			note(c, obj, "update", obj.GetNamespace(), obj.GetName())
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			note(c, obj, "patch", obj.GetNamespace(), obj.GetName())
			return c.Patch(ctx, obj, patch, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			note(c, obj, "delete", obj.GetNamespace(), obj.GetName())
			return c.Delete(ctx, obj, opts...)
		},
		// A server-side apply is a PATCH; one that finds no object is
		// also authorized as a create of that name.
		Apply: func(ctx context.Context, c client.WithWatch, ac runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(ac)
			if err != nil {
				t.Fatalf("apply configuration %T: %v", ac, err)
			}
			obj := &unstructured.Unstructured{Object: m}
			note(c, obj, "patch", obj.GetNamespace(), obj.GetName())
			existing := &unstructured.Unstructured{}
			existing.SetGroupVersionKind(obj.GroupVersionKind())
			if err := c.Get(ctx, client.ObjectKeyFromObject(obj), existing); apierrors.IsNotFound(err) {
				note(c, obj, "create", obj.GetNamespace(), obj.GetName())
			}
			return c.Apply(ctx, ac, opts...)
		},
	}), base
}

// permits reports whether an entry of ps covers s for a server in namespace ns.
func permits(ps []Permission, ns string, s sent) bool {
	return slices.ContainsFunc(ps, func(p Permission) bool {
		if p.Group != s.group || p.Resource != s.resource || !slices.Contains(p.Verbs, s.verb) {
			return false
		}
		if p.OwnNamespace && s.namespace != ns {
			return false
		}
		if len(p.Namespaces) > 0 && !slices.Contains(p.Namespaces, s.namespace) {
			return false
		}
		return p.Name == "" || p.Name == AnyName || p.Name == s.name
	})
}

// TestPermissionsCoverWhatTheCodeSends runs the components that talk to the
// API server directly (hashkey.Ensure, the key Keeper, certs, the settings
// publisher) against a
// recording client, through first start, steady state, a restored key
// Secret and a certificate renewal. Every request they send must be in the
// Permissions table, and every table entry naming their objects must have
// been sent: the table neither misses a verb nor lists one the code does
// not use.
func TestPermissionsCoverWhatTheCodeSends(t *testing.T) {
	o := DefaultOptions()
	ps := Permissions(o, workload.Kinds())
	rec := &recorder{}
	cfgName := o.WebhookConfigName
	c, base := rec.client(t, &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: cfgName},
		Webhooks:   []admissionregistrationv1.MutatingWebhook{{Name: "w.confighash.dev"}},
	})
	ctx := t.Context()

	keyRef := types.NamespacedName{Namespace: o.Namespace, Name: o.HMACKeySecret}
	var key []byte
	for range 2 { // create, then read
		var err error
		if key, err = hashkey.Ensure(ctx, c, keyRef); err != nil {
			t.Fatalf("hashkey.Ensure: %v", err)
		}
	}
	// The Keeper every replica runs: a check, then one that restores the
	// Secret deleted behind the recorder's back.
	km, err := hashkey.NewMetrics(prometheus.NewRegistry())
	if err != nil {
		t.Fatal(err)
	}
	keeper := &hashkey.Keeper{Client: c, Ref: keyRef, Key: key, Metrics: km}
	for i := range 2 {
		if i == 1 {
			if err := base.Delete(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: keyRef.Namespace, Name: keyRef.Name}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := keeper.Check(ctx); err != nil {
			t.Fatalf("Keeper.Check %d: %v", i, err)
		}
	}
	certKey := types.NamespacedName{Namespace: o.Namespace, Name: o.CertSecret}
	m := certs.New(c, certs.Options{
		SecretKey:         certKey,
		WebhookConfigName: cfgName,
		CABundleConfigMap: o.CABundleConfigMap,
		IPAddresses:       []net.IP{net.ParseIP("127.0.0.1")},
		CertDir:           t.TempDir(),
	})
	for i := range 3 { // issue and inject; steady state; renew
		if i == 2 {
			// Lose the serving certificate behind the recorder's back, so
			// the third check renews it.
			s := &corev1.Secret{}
			if err := base.Get(ctx, certKey, s); err != nil {
				t.Fatal(err)
			}
			delete(s.Data, certs.SecretCertKey)
			if err := base.Update(ctx, s); err != nil {
				t.Fatal(err)
			}
			// And the published bundle, so the check rewrites it.
			cm := &corev1.ConfigMap{}
			if err := base.Get(ctx, types.NamespacedName{Namespace: o.Namespace, Name: o.CABundleConfigMap}, cm); err != nil {
				t.Fatal(err)
			}
			cm.Data[certs.ConfigMapCABundleKey] = "edited"
			if err := base.Update(ctx, cm); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Ensure(ctx); err != nil {
			t.Fatalf("certs Ensure %d: %v", i, err)
		}
	}

	// The leader's settings publisher: a first apply creates the
	// ConfigMap, the next finds it.
	pub := &serversettings.Publisher{Client: c, Namespace: o.Namespace, Settings: o.publishedSettings(), Interval: time.Millisecond}
	pubCtx, stop := context.WithCancel(ctx)
	pubDone := make(chan error, 1)
	go func() { pubDone <- pub.Start(pubCtx) }()
	deadline := time.Now().Add(10 * time.Second)
	for applies := 0; applies < 2; {
		if time.Now().After(deadline) {
			t.Fatalf("the publisher applied %d times in 10 s, want 2", applies)
		}
		time.Sleep(5 * time.Millisecond)
		rec.mu.Lock()
		applies = 0
		for _, s := range rec.sent {
			if s.name == serversettings.ConfigMapName && s.verb == "patch" {
				applies++
			}
		}
		rec.mu.Unlock()
	}
	stop()
	if err := <-pubDone; err != nil {
		t.Fatalf("publisher: %v", err)
	}

	used := map[string]bool{}
	for _, s := range rec.sent {
		used[s.group+"/"+s.resource+"/"+s.verb+"/"+s.name] = true
		if !permits(ps, o.Namespace, s) {
			t.Errorf("the code sent %s, which Permissions does not list", s)
		}
	}
	// Entries naming the objects these components own must all be used.
	for _, p := range ps {
		if p.Name != o.HMACKeySecret && p.Name != o.CertSecret && p.Name != cfgName && p.Name != o.CABundleConfigMap && p.Name != serversettings.ConfigMapName {
			continue
		}
		for _, v := range p.Verbs {
			if !used[p.Group+"/"+p.Resource+"/"+v+"/"+p.Name] {
				t.Errorf("Permissions lists %s %s %q (%s), which the code never sent", v, p.Resource, p.Name, p.Why)
			}
		}
	}
}
