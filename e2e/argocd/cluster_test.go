package argocd

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/diff"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/kube"
	"github.com/argoproj/argo-cd/gitops-engine/v3/pkg/utils/tracing"
	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/confighash/confighash/internal/contract"
)

// kubeconfigEnv is the same variable the main e2e specs read.
const kubeconfigEnv = "CONFIGHASH_E2E_KUBECONFIG"

// cluster is what Argo CD's application controller holds for a destination
// cluster: a kubectl-based applier for syncs, a dry-run applier for
// server-side diff, and the OpenAPI-derived parser server-side diff needs.
type cluster struct {
	kube    kubernetes.Interface
	dynamic dynamic.Interface
	ops     kube.ResourceOperations
	dryRun  diff.KubeApplier
	parser  *managedfields.GvkParser
}

// the is shared by every test: building the OpenAPI parser takes seconds.
var the *cluster

func TestMain(m *testing.M) {
	kc := os.Getenv(kubeconfigEnv)
	if kc == "" {
		fmt.Fprintf(os.Stderr, "%s is not set. These tests need a cluster with confighash running; from the repository root run\n"+
			"  go run ./e2e/cmd/cluster exec -- env GOTOOLCHAIN=go1.27.3 go -C e2e/argocd test ./...\n", kubeconfigEnv)
		os.Exit(2)
	}
	c, cleanup, err := connect(kc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "connecting to the cluster:", err)
		os.Exit(1)
	}
	the = c
	code := m.Run()
	if err := stopArgoCD(code != 0); err != nil {
		fmt.Fprintln(os.Stderr, "stopping Argo CD:", err)
		code = 1
	}
	cleanup()
	os.Exit(code)
}

func connect(kubeconfig string) (*cluster, func(), error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, nil, fmt.Errorf("loading %s: %w", kubeconfig, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	kc := &kube.KubectlCmd{Log: logr.Discard(), Tracer: tracing.NopTracer{}}
	_, parser, err := kc.LoadOpenAPISchema(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("loading the OpenAPI schema: %w", err)
	}
	ops, opsCleanup, err := kc.ManageResources(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("building the sync applier: %w", err)
	}
	dryRun, dryRunCleanup, err := kc.ManageServerSideDiffDryRuns(cfg)
	if err != nil {
		opsCleanup()
		return nil, nil, fmt.Errorf("building the server-side diff applier: %w", err)
	}
	cleanup := func() { opsCleanup(); dryRunCleanup() }
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("building a clientset: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		cleanup()
		return nil, nil, fmt.Errorf("building a dynamic client: %w", err)
	}
	return &cluster{kube: cs, dynamic: dyn, ops: ops, dryRun: dryRun, parser: parser}, cleanup, nil
}

// injectedNamespace creates a namespace labelled for injection and deletes
// it when the test ends.
func (c *cluster) injectedNamespace(t *testing.T, name string) string {
	t.Helper()
	ctx := t.Context()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{contract.InjectionLabel: contract.InjectionEnabled}}}
	if _, err := c.kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = c.kube.CoreV1().Namespaces().Delete(context.WithoutCancel(ctx), name, metav1.DeleteOptions{})
	})
	return name
}

// sync applies obj the way Argo CD's sync does: kubectl apply code under the
// argocd-controller field manager, client-side or server-side.
func (c *cluster) sync(t *testing.T, obj *unstructured.Unstructured, serverSide bool) {
	t.Helper()
	if _, err := c.ops.ApplyResource(t.Context(), obj.DeepCopy(), cmdutil.DryRunNone, false, false, serverSide, argoManager); err != nil {
		t.Fatalf("syncing %s %s (server-side=%v): %v", obj.GetKind(), obj.GetName(), serverSide, err)
	}
}

// get reads the live object, as Argo CD's cluster cache holds it.
func (c *cluster) get(t *testing.T, gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	var ri dynamic.ResourceInterface = c.dynamic.Resource(gvr)
	if namespace != "" {
		ri = c.dynamic.Resource(gvr).Namespace(namespace)
	}
	u, err := ri.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("reading %s %s/%s: %v", gvr.Resource, namespace, name, err)
	}
	return u
}

// quiet is how long an object must stay unchanged before a test diffs it.
// Controllers write status several times after a change (observed
// generation, then replica counts as pods are created); Argo CD's cache
// would show each, and the diff modes that keep status
// (IncludeMutationWebhook) would report a diff for any write that lands
// between reading live and the dry-run.
const quiet = 1500 * time.Millisecond

// settled waits until the object satisfies cond and its resourceVersion has
// not moved for quiet, and returns it.
func (c *cluster) settled(t *testing.T, gvr schema.GroupVersionResource, namespace, name, what string, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	var live *unstructured.Unstructured
	var since time.Time
	eventually(t, what, func(ctx context.Context) (bool, error) {
		u, err := c.dynamic.Resource(gvr).Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !cond(u) {
			live = nil
			return false, nil
		}
		if live == nil || live.GetResourceVersion() != u.GetResourceVersion() {
			live, since = u, time.Now()
			return false, nil
		}
		return time.Since(since) >= quiet, nil
	})
	return live
}

// observed reports whether the kind's controller has seen the object's
// latest generation. CronJobs have no observedGeneration.
func observed(u *unstructured.Unstructured) bool {
	if u.GetKind() == "CronJob" {
		return true
	}
	if u.GetKind() == "Rollout" {
		// Argo Rollouts writes observedGeneration as a string.
		g, _, _ := unstructured.NestedString(u.Object, "status", "observedGeneration")
		return g == strconv.FormatInt(u.GetGeneration(), 10)
	}
	g, ok, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if u.GetKind() == "Deployment" && u.GetAnnotations()["deployment.kubernetes.io/revision"] == "" {
		return false
	}
	return ok && g == u.GetGeneration()
}

// eventually polls cond until it holds, failing the test after a minute.
func eventually(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, time.Minute, true, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}
