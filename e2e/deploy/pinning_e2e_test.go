//go:build e2e

package deploy

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/hashkey"
	"github.com/confighash/confighash/internal/pinner"
	"github.com/confighash/confighash/internal/pinning"
	"github.com/confighash/confighash/webhook"
)

// TestPinningPolicyAtRunTime installs the self-managed overlay with the
// pinning component for real and holds the ValidatingAdmissionPolicies to
// what docs/security.md says of them, on a real API server:
//   - the binary, run with the Deployment's args (--pinning) as the
//     manifests' ServiceAccount, gets ready: its own namespace's writes
//     (HMAC key, certificate, CA bundle, settings) pass;
//   - the pinner, as that ServiceAccount, pins a pod of a revision in team-a
//     (labelled, bound): its creates and its patch sealing a second
//     revision pass; in team-b (bound, not labelled) the policy refuses its
//     create; in team-c (labelled, not bound) RBAC refuses its first read;
//   - that ServiceAccount's other writes there are refused: a token Secret,
//     a typed or mutable or unlabelled look-alike, a delete of a ConfigMap
//     that is not a snapshot, a patch making a ConfigMap one;
//   - anyone else, even a cluster admin, is refused a create of an object
//     labelled as a snapshot and the label added to one, while the garbage
//     collector's removal of a gone revision from a snapshot's owners
//     passes.
func TestPinningPolicyAtRunTime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r := renderNamed(t, pinningRenders(t), "kustomize/self-managed+pinning")
	bin, _ := confighashBinary(t)
	c := controlPlane(t)
	admin := adminClient(t, c)
	// team-a and team-b are the component's example bindings; team-c is
	// labelled but binds nothing. Another spec may have made team-a and
	// team-b already.
	labels := map[string]map[string]string{
		"team-a": {contract.InjectionLabel: contract.InjectionEnabled, pinning.NamespaceLabel: pinning.NamespaceEnabled},
		"team-b": {contract.InjectionLabel: contract.InjectionEnabled},
		"team-c": {contract.InjectionLabel: contract.InjectionEnabled, pinning.NamespaceLabel: pinning.NamespaceEnabled},
	}
	for ns, l := range labels {
		ensureNamespace(ctx, t, admin, ns, l)
	}
	dec := install(ctx, t, r)
	t.Cleanup(func() {
		ctx := context.Background()
		for _, p := range dec.Policies {
			_ = admin.AdmissionregistrationV1().ValidatingAdmissionPolicies().Delete(ctx, p.Name, metav1.DeleteOptions{})
		}
		for _, b := range dec.PolBinds {
			_ = admin.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().Delete(ctx, b.Name, metav1.DeleteOptions{})
		}
	})

	proc, _ := runAsServiceAccount(ctx, t, c, admin, bin, dec)
	// Ready means the caBundle is injected: into the pod webhook's entry
	// as well as the first.
	mwc, err := admin.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, dec.MWC.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range mwc.Webhooks {
		if len(w.ClientConfig.CABundle) == 0 || string(w.ClientConfig.CABundle) != string(mwc.Webhooks[0].ClientConfig.CABundle) {
			t.Errorf("webhook %s: caBundle of %d bytes, want the injected one", w.Name, len(w.ClientConfig.CABundle))
		}
	}
	if len(mwc.Webhooks) != 2 {
		t.Errorf("%d webhooks, want the stamp's and the pod webhook", len(mwc.Webhooks))
	}
	key, err := hashkey.Ensure(ctx, mustClient(t, c.RESTConfig()), types.NamespacedName{Namespace: Namespace, Name: flagsOf(t, dec)["hmac-key-secret"]})
	if err != nil {
		t.Fatal(err)
	}
	proc.stop(t)
	if log := proc.log(); strings.Contains(strings.ToLower(log), "forbidden") || strings.Contains(log, "ValidatingAdmissionPolicy") {
		t.Errorf("the binary was refused something:\n%s", grep(log, "forbidden"))
	}
	// The policy takes a moment to reach the apiserver's admission; a
	// refused write of the admin's, below, shows it is in force.
	waitPolicyInForce(ctx, t, admin)

	sa := serviceAccountConfig(ctx, t, admin, c.RESTConfig(), dec.SA)
	p := &pinner.Pinner{Client: mustClient(t, sa), Key: key}

	// team-a: the pinner's creates, then its patch sealing a second
	// revision of the same content, pass.
	rs1, pod1 := stampedRevision(ctx, t, admin, key, "team-a", "web-1")
	res := p.Pin(ctx, pod1, false)
	if res.Reason != pinner.Pinned || res.Writes != 2 {
		t.Fatalf("team-a: %s (%s), %d writes; want pinned with 2", res.Reason, res.Detail, res.Writes)
	}
	_, pod2 := stampedRevision(ctx, t, admin, key, "team-a", "web-2")
	if res := p.Pin(ctx, pod2, false); res.Reason != pinner.Pinned || res.Writes != 2 {
		t.Fatalf("team-a, a second revision: %s (%s), %d writes; want pinned by 2 patches", res.Reason, res.Detail, res.Writes)
	}
	snapshot := res.Snapshots[hasher.Source{Kind: hasher.ConfigMap, Name: "app"}]
	t.Logf("team-a: pinned to %v", res.Snapshots)

	// team-b binds the role but does not ask for pinning: the policy
	// refuses the create.
	_, podB := stampedRevision(ctx, t, admin, key, "team-b", "web")
	if res := p.Pin(ctx, podB, false); res.Reason != pinner.Forbidden || !strings.Contains(res.Detail, "confighash.dev/pinning=enabled") {
		t.Errorf("team-b (not labelled): %s (%s); want forbidden, refused by the policy", res.Reason, res.Detail)
	} else {
		t.Logf("team-b (not labelled): %s: %s", res.Reason, res.Detail)
	}
	// team-c asks for pinning but binds nothing: RBAC refuses the
	// revision's read, the pinner's first request there.
	_, podC := stampedRevision(ctx, t, admin, key, "team-c", "web")
	if res := p.Pin(ctx, podC, false); res.Reason != pinner.Forbidden {
		t.Errorf("team-c (not bound): %s (%s); want forbidden", res.Reason, res.Detail)
	} else {
		t.Logf("team-c (not bound): %s: %s", res.Reason, res.Detail)
	}

	// confighash's other writes in a pinning namespace.
	saClient := mustClient(t, sa)
	look := func(name string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "team-a", Name: name, Labels: map[string]string{pinning.SnapshotLabel: "true"}}
	}
	// Valid objects, so that what refuses them is the policy, which runs
	// after the API's own validation.
	token := look("token-pin-0")
	token.Annotations = map[string]string{corev1.ServiceAccountNameKey: "default"}
	refused := map[string]client.Object{
		"a token Secret":        &corev1.Secret{ObjectMeta: token, Immutable: ptr.To(true), Type: corev1.SecretTypeServiceAccountToken},
		"a TLS Secret":          &corev1.Secret{ObjectMeta: look("tls-pin-0"), Immutable: ptr.To(true), Type: corev1.SecretTypeTLS, Data: map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k")}},
		"a mutable ConfigMap":   &corev1.ConfigMap{ObjectMeta: look("app-pin-1")},
		"a ConfigMap, unnamed":  &corev1.ConfigMap{ObjectMeta: look("app-1"), Immutable: ptr.To(true)},
		"a ConfigMap, no label": &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "app-pin-2"}, Immutable: ptr.To(true)},
	}
	for what, obj := range refused {
		if err := saClient.Create(ctx, obj); !isPolicyDenial(err) {
			t.Errorf("confighash creating %s in team-a: %v; want refused by the policy", what, err)
		}
	}
	if err := saClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "app"}}); !isPolicyDenial(err) {
		t.Errorf("confighash deleting the source ConfigMap: %v; want refused by the policy", err)
	}

	// Anyone else, even a cluster admin: no forged snapshot, no label added
	// or changed.
	tenant := rest.CopyConfig(c.RESTConfig())
	tenant.Impersonate = rest.ImpersonationConfig{UserName: "tenant", Groups: []string{"system:masters", "system:authenticated"}}
	tc := mustClient(t, tenant)
	forged := &corev1.ConfigMap{ObjectMeta: look("app-pin-3"), Immutable: ptr.To(true), Data: map[string]string{"k": "evil"}}
	if err := tc.Create(ctx, forged); !isPolicyDenial(err) {
		t.Errorf("a tenant creating a labelled snapshot: %v; want refused", err)
	}
	plain := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "plain-pin-4"}, Data: map[string]string{"k": "evil"}}
	if err := tc.Create(ctx, plain); err != nil {
		t.Fatal(err)
	}
	relabel := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"`+pinning.SnapshotLabel+`":"true"}}}`))
	if err := tc.Patch(ctx, plain, relabel); !isPolicyDenial(err) {
		t.Errorf("a tenant labelling a ConfigMap as a snapshot: %v; want refused", err)
	}
	// Nor does confighash make it one.
	convert := client.RawPatch(types.MergePatchType, []byte(`{"immutable":true,"metadata":{"labels":{"`+pinning.SnapshotLabel+`":"true"}}}`))
	if err := saClient.Patch(ctx, plain.DeepCopy(), convert); !isPolicyDenial(err) {
		t.Errorf("confighash making a tenant's ConfigMap a snapshot: %v; want refused", err)
	}
	flip := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"`+pinning.SnapshotLabel+`":"yes"}}}`))
	if err := tc.Patch(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: snapshot}}, flip); !isPolicyDenial(err) {
		t.Errorf("a tenant changing a snapshot's label: %v; want refused", err)
	}

	// The garbage collector: web-1 gone, it removes web-1 from the
	// snapshots' owners (an update keeping the label), and they stay.
	if err := admin.AppsV1().ReplicaSets("team-a").Delete(ctx, rs1.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		cm, err := admin.CoreV1().ConfigMaps("team-a").Get(ctx, snapshot, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, o := range cm.OwnerReferences {
			if o.UID == rs1.UID {
				return false, nil
			}
		}
		return len(cm.OwnerReferences) == 1, nil
	})
	if err != nil {
		t.Errorf("the garbage collector did not remove web-1 from the snapshot's owners: %v", err)
	}
	// And confighash's lifetime delete of a snapshot passes.
	if err := saClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: snapshot}}); err != nil {
		t.Errorf("confighash deleting a snapshot: %v", err)
	}
}

// ensureNamespace creates ns with labels, or sets them on the existing one.
func ensureNamespace(ctx context.Context, t *testing.T, admin kubernetes.Interface, ns string, labels map[string]string) {
	t.Helper()
	_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labels}}, metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	obj, err := admin.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obj.Labels = labels
	obj.Labels["kubernetes.io/metadata.name"] = ns
	if _, err := admin.CoreV1().Namespaces().Update(ctx, obj, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitPolicyInForce waits until the snapshot-label policy refuses an
// admin's labelled create: policies are loaded asynchronously.
func waitPolicyInForce(ctx context.Context, t *testing.T, admin kubernetes.Interface) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "probe-pin-0", Labels: map[string]string{pinning.SnapshotLabel: "true"}}}
		_, err := admin.CoreV1().ConfigMaps("team-b").Create(ctx, cm, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return isPolicyDenial(err), nil
	})
	if err != nil {
		t.Fatalf("the policy %s is not in force after a minute", webhook.SnapshotLabelPolicyName)
	}
}

// isPolicyDenial reports whether err is a ValidatingAdmissionPolicy's refusal.
func isPolicyDenial(err error) bool {
	return err != nil && strings.Contains(err.Error(), "ValidatingAdmissionPolicy")
}

// stampedRevision makes, in ns, ConfigMap app and Opaque Secret db (unless
// they exist) and a ReplicaSet name of no replicas whose template reads
// both and carries their stamp under key; it returns the ReplicaSet and a
// pod of it, not created: what the pod webhook hands the pinner.
func stampedRevision(ctx context.Context, t *testing.T, admin kubernetes.Interface, key []byte, ns, name string) (*appsv1.ReplicaSet, *corev1.Pod) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"k": "v1"}}
	if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db"}, Data: map[string][]byte{"password": []byte("p1")}}
	if _, err := admin.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	spec := corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: "registry.invalid/app:1",
		Env: []corev1.EnvVar{{Name: "K", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "app"}, Key: "k"}}}},
		EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}}}},
	}}}
	refs, err := hasher.References(&spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := hasher.Checksum(key, ns, refs, func(src hasher.Source) (hasher.Content, bool, error) {
		if src.Kind == hasher.Secret {
			s, err := admin.CoreV1().Secrets(ns).Get(ctx, src.Name, metav1.GetOptions{})
			if err != nil {
				return hasher.Content{}, false, err
			}
			return hasher.SecretContent(s), true, nil
		}
		cm, err := admin.CoreV1().ConfigMaps(ns).Get(ctx, src.Name, metav1.GetOptions{})
		if err != nil {
			return hasher.Content{}, false, err
		}
		return hasher.ConfigMapContent(cm), true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": name}
	annotations := map[string]string{contract.ChecksumAnnotation: sum.Checksum}
	rs, err := admin.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: annotations}, Spec: spec},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: name + "-", Labels: labels, Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}},
		Spec: spec,
	}
	return rs, pod
}

// serviceAccountConfig is a REST config that authenticates as sa.
func serviceAccountConfig(ctx context.Context, t *testing.T, admin kubernetes.Interface, base *rest.Config, sa *corev1.ServiceAccount) *rest.Config {
	t.Helper()
	cfg := rest.AnonymousClientConfig(base)
	cfg.BearerToken = framework.ServiceAccountToken(ctx, t, admin, sa)
	return cfg
}

func mustClient(t *testing.T, cfg *rest.Config) client.Client {
	t.Helper()
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
