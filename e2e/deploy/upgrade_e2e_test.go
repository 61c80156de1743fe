//go:build e2e

package deploy

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/e2e/images"
	"github.com/confighash/confighash/internal/contract"
)

// settle is how long after an upgrade (once the new leader holds the Lease
// and has re-checked at start) workloads must still not roll.
const settle = 20 * time.Second

// tenantKinds are the kinds whose objects in tenants' namespaces keep
// confighash's stamps by design, after a removal too.
var tenantKinds = []string{"Deployment", "StatefulSet", "DaemonSet", "CronJob", "ReplicaSet", "ControllerRevision", "Pod", "Job"}

// TestUpgradeAndRemove upgrades confighash from the previous version (see
// previousRef: its chart, manifests and image, built from that commit) to
// this tree, first with Helm, then with kustomize, on a cluster with a node
// and stamped workloads of every kind: no workload rolls, and no admission
// during the upgrade is left unstamped or stamped wrong. After each, it
// removes confighash as docs/operations.md says and lists every object of
// every resource type: nothing of confighash's is left but what the docs
// list, and after the docs' commands nothing but the workloads, which did
// not roll. Between the two, confighash is installed again over workloads
// stamped by the first install, and rolls none of them.
func TestUpgradeAndRemove(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	env := startNode(ctx, t)
	paths, err := FindPaths()
	if err != nil {
		t.Fatal(err)
	}
	docs, err := readRemovalDocs(paths.Root)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := previousRef(ctx, paths.Root)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	previous := filepath.Join(work, "previous")
	begin := time.Now()
	if err := extractTree(ctx, paths.Root, ref, previous); err != nil {
		t.Fatal(err)
	}
	oldImage, err := previousImage(ctx, previous, work, env.Registry)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("previous version: %s, image %s built and pushed in %s", ref, oldImage, time.Since(begin).Round(time.Millisecond))
	admin, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	nodes := &corev1.NodeList{}
	if err := env.Client.List(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	u := &upgrade{t: t, env: env, admin: admin, docs: docs, tenants: []string{"shop", "writes-helm", "writes-kustomize"}}
	for _, n := range nodes.Items {
		u.nodes = append(u.nodes, n.Name)
	}
	if found, err := sweep(ctx, env.Config, u.spare); err != nil || len(found) != 0 {
		t.Fatalf("before any install, the sweep finds %v (%v): it must find only confighash's", found, err)
	}

	// Helm, into a namespace created and labelled as the README says.
	h := newHelm(t, env, work)
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace, Labels: map[string]string{
		"pod-security.kubernetes.io/enforce": "restricted", "pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/audit": "restricted",
	}}}); err != nil {
		t.Fatal(err)
	}
	u.timed("helm install (previous)", func() error { return h.install(ctx, filepath.Join(previous, "charts", "confighash"), oldImage) })
	u.tenant(ctx, "shop")
	workloads := stampedWorkloads("shop")
	for _, obj := range workloads {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s: %v", obj.GetName(), err)
		}
	}
	if err := waitWorkloadsReady(ctx, env, workloads); err != nil {
		t.Fatal(err)
	}
	first, err := rollStates(ctx, env.Client, workloads)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range first {
		if s.Stamp == "" {
			t.Fatalf("%s was not stamped by the previous version", name)
		}
	}
	u.withoutRolls(ctx, workloads, "writes-helm", "helm upgrade", func() error {
		return h.upgrade(ctx, paths.Chart(), images.Confighash().Ref)
	})
	u.remove(ctx, workloads, "helm uninstall", func() error {
		if _, err := env.Run(ctx, "", "delete", "mutatingwebhookconfiguration", "confighash"); err != nil {
			return err
		}
		return h.uninstall(ctx)
	})

	// kustomize, over the workloads the first install stamped: the
	// namespace label comes back, a new key is made, nothing rolls.
	if _, err := env.Run(ctx, "", "label", "namespace", "shop", contract.InjectionLabel+"="+contract.InjectionEnabled); err != nil {
		t.Fatal(err)
	}
	oldDir, newDir := filepath.Join(work, "kustomize-previous"), filepath.Join(work, "kustomize-current")
	for dir, src := range map[string]struct{ root, image string }{
		oldDir: {previous, oldImage}, newDir: {paths.Root, images.Confighash().Ref},
	} {
		if err := writeImageOverlay(dir, filepath.Join(src.root, framework.SelfManagedOverlay), src.image); err != nil {
			t.Fatal(err)
		}
	}
	u.timed("kubectl apply -k (previous)", func() error {
		if _, err := env.Run(ctx, "", "apply", "-k", oldDir); err != nil {
			return err
		}
		return env.WaitRollout(ctx, Namespace, "confighash", 3*time.Minute)
	})
	u.settled(ctx)
	reinstalled, err := rollStates(ctx, env.Client, workloads)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rolled(first, reinstalled) {
		t.Errorf("installing again after a removal rolled %s", r)
	}
	u.withoutRolls(ctx, workloads, "writes-kustomize", "kubectl apply -k", func() error {
		if _, err := env.Run(ctx, "", "apply", "-k", newDir); err != nil {
			return err
		}
		return env.WaitRollout(ctx, Namespace, "confighash", 3*time.Minute)
	})
	u.remove(ctx, workloads, "kubectl delete -k", func() error {
		if _, err := env.Run(ctx, "", "delete", "mutatingwebhookconfiguration", "confighash"); err != nil {
			return err
		}
		_, err := env.Run(ctx, "", "delete", "-k", newDir, "--ignore-not-found")
		return err
	})
}

// upgrade holds what the phases of TestUpgradeAndRemove share.
type upgrade struct {
	t       *testing.T
	env     *framework.NodeEnv
	admin   kubernetes.Interface
	docs    removalDocs
	tenants []string
	// nodes are the harness's node names, which have confighash in them.
	nodes []string
}

// spare says which objects the sweep leaves out: the workloads in
// tenants' namespaces, their ReplicaSets, revisions and pods, which keep
// their stamps by design, and the harness's nodes with the objects and
// Events named after them.
func (u *upgrade) spare(o *unstructured.Unstructured) bool {
	if slices.Contains(u.tenants, o.GetNamespace()) && slices.Contains(tenantKinds, o.GetKind()) {
		return true
	}
	for _, n := range u.nodes {
		if o.GetName() == n || strings.HasPrefix(o.GetName(), n+".") {
			return true
		}
	}
	return false
}

func (u *upgrade) timed(what string, f func() error) {
	u.t.Helper()
	begin := time.Now()
	if err := f(); err != nil {
		u.t.Fatalf("%s: %v", what, err)
	}
	u.t.Logf("%s: %s", what, time.Since(begin).Round(time.Millisecond))
}

// tenant makes a namespace labelled for injection with ConfigMap cfg and
// Secret sec.
func (u *upgrade) tenant(ctx context.Context, ns string) {
	u.t.Helper()
	for _, obj := range []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{contract.InjectionLabel: contract.InjectionEnabled}}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg"}, Data: map[string]string{"greeting": "hello"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "sec"}, StringData: map[string]string{"PASSWORD": "s3cret"}},
	} {
		if err := u.env.Client.Create(ctx, obj); err != nil {
			u.t.Fatalf("creating %s: %v", obj.GetName(), err)
		}
	}
}

// withoutRolls runs an upgrade while a stamp loop writes in namespace
// writes, and checks that no workload rolled, through it and for settle
// after the new leader took over, and that every admitted write carried
// the stamp its content calls for.
func (u *upgrade) withoutRolls(ctx context.Context, workloads []client.Object, writes, what string, run func() error) {
	t := u.t
	t.Helper()
	u.tenant(ctx, writes)
	probe := probeDeployment(writes, "probe-update", "cfg")
	if err := u.env.Client.Create(ctx, probe); err != nil {
		t.Fatal(err)
	}
	want, err := framework.TemplateStamp(probe)
	if err != nil || want == "" {
		t.Fatalf("the installed version did not stamp %s/%s: %q %v", writes, probe.Name, want, err)
	}
	before, err := rollStates(ctx, u.env.Client, workloads)
	if err != nil {
		t.Fatal(err)
	}
	mwc, err := u.admin.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "confighash", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	admissions := func() webhookAdmissions {
		var sum webhookAdmissions
		for _, w := range mwc.Webhooks {
			a, err := readWebhookAdmissions(ctx, u.admin, w.Name)
			if err != nil {
				t.Fatal(err)
			}
			sum.Calls, sum.FailOpen = sum.Calls+a.Calls, sum.FailOpen+a.FailOpen
		}
		return sum
	}
	counted := admissions()
	loop := startStampLoop(ctx, u.env.Client, writes, "cfg", 250*time.Millisecond, want)
	begin := time.Now()
	err = run()
	upgraded := time.Since(begin)
	if err != nil {
		loop.Stop()
		t.Fatalf("%s: %v", what, err)
	}
	u.checkImage(ctx, mwc)
	u.settled(ctx)
	loop.Stop()
	after, err := rollStates(ctx, u.env.Client, workloads)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rolled(before, after) {
		t.Errorf("%s rolled %s", what, r)
	}
	now := admissions()
	failOpen := now.FailOpen - counted.FailOpen
	t.Logf("%s in %s, then %s settled: %d creates and %d replaces admitted, %d unstamped, %d stamped other than %s, %d failed; the apiserver counted %.0f webhook calls, %.0f failed open",
		what, upgraded.Round(time.Millisecond), settle, loop.Creates, loop.Updates, loop.Unstamped, loop.Wrong, want, len(loop.Errors), now.Calls-counted.Calls, failOpen)
	if loop.Unstamped != 0 || loop.Wrong != 0 || len(loop.Errors) != 0 || failOpen != 0 {
		t.Errorf("during %s: %d writes admitted unstamped, %d stamped wrong, %d failed (first: %v), %.0f failed open",
			what, loop.Unstamped, loop.Wrong, len(loop.Errors), firstErr(loop.Errors), failOpen)
	}
	if loop.Creates == 0 || loop.Updates == 0 {
		t.Errorf("during %s: %d creates, %d replaces: the upgrade was not crossed by admissions", what, loop.Creates, loop.Updates)
	}
}

// checkImage fails unless every confighash pod runs this tree's image
// (the upgrade replaced them) and the webhook configuration kept its name.
func (u *upgrade) checkImage(ctx context.Context, mwc *admissionregistrationv1.MutatingWebhookConfiguration) {
	u.t.Helper()
	d := &appsv1.Deployment{}
	if err := u.env.Client.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "confighash"}, d); err != nil {
		u.t.Fatal(err)
	}
	if got := d.Spec.Template.Spec.Containers[0].Image; got != images.Confighash().Ref {
		u.t.Fatalf("after the upgrade confighash runs %s, want %s", got, images.Confighash().Ref)
	}
	if _, err := u.admin.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, mwc.Name, metav1.GetOptions{}); err != nil {
		u.t.Fatal(err)
	}
}

// settled waits until a current confighash pod holds the leader Lease (its
// start-up re-check then runs), then for settle.
func (u *upgrade) settled(ctx context.Context) {
	u.t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		pods := &corev1.PodList{}
		lease := &coordinationv1.Lease{}
		err := u.env.Client.List(ctx, pods, client.InNamespace(Namespace), client.MatchingLabels{"app.kubernetes.io/name": "confighash"})
		if err == nil {
			err = u.env.Client.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "confighash.dev"}, lease)
		}
		if err == nil && lease.Spec.HolderIdentity != nil {
			holder, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
			for _, p := range pods.Items {
				if p.Name == holder && p.DeletionTimestamp == nil {
					time.Sleep(settle)
					return
				}
			}
		}
		if time.Now().After(deadline) {
			u.t.Fatalf("no current confighash pod took the leader Lease (last error: %v)", err)
		}
		time.Sleep(time.Second)
	}
}

// writeImageOverlay writes a kustomization in dir over overlay with one
// change, the image, as a user's overlay sets it.
func writeImageOverlay(dir, overlay, image string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	rel, err := filepath.Rel(dir, overlay)
	if err != nil {
		return fmt.Errorf("locating %s: %w", overlay, err)
	}
	name, tag, _ := strings.Cut(image, ":")
	k := fmt.Sprintf("apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - %s\nimages:\n  - name: ghcr.io/confighash/confighash\n    newName: %s\n    newTag: %s\n", rel, name, tag)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644); err != nil {
		return fmt.Errorf("writing kustomization: %w", err)
	}
	return nil
}
