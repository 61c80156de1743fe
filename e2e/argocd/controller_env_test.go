package argocd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	appclient "github.com/argoproj/argo-cd/v3/pkg/client/clientset/versioned"
	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/e2e/framework"
)

// argoCD is Argo CD's own application controller and repo-server, running
// against the cluster of the tests, and what the controller specs read the
// cluster with. It is started by the first spec that needs it
// (startArgoCD) and stopped by TestMain.
type argoCD struct {
	run  *controlplane.ArgoCDRun
	apps appclient.Interface
	// env is the e2e specs' view of the cluster, for their one definition
	// of a Deployment's ReplicaSets and stamp.
	env *framework.Env
	dir string
}

// controller is started once, by the first controller spec.
var controller struct {
	once sync.Once
	argo *argoCD
	err  error
	skip string
}

// startArgoCD returns the running Argo CD, starting it on first use: it
// builds the binary if needed (EnsureArgoCD), installs the CRDs and the
// settings objects and starts redis, the repo-server and the controller. A
// cluster without a node skips the spec: its pods would never run, so
// nothing would become Healthy (make test runs these specs under
// `cluster exec --node`). The controller's log is quoted when the spec
// fails.
func startArgoCD(t *testing.T) *argoCD {
	t.Helper()
	controller.once.Do(func() {
		ctx := context.WithoutCancel(t.Context())
		nodes, err := the.kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			controller.err = fmt.Errorf("listing nodes: %w", err)
			return
		}
		if len(nodes.Items) == 0 {
			controller.skip = "the cluster has no node, so no pod runs; run these specs under `go run ./e2e/cmd/cluster exec --node`"
			return
		}
		controller.argo, controller.err = newArgoCD(ctx)
	})
	if controller.skip != "" {
		t.Skip(controller.skip)
	}
	if controller.err != nil {
		t.Fatalf("starting Argo CD: %v", controller.err)
	}
	controller.argo.logsOnFailure(t)
	return controller.argo
}

func newArgoCD(ctx context.Context) (*argoCD, error) {
	kubeconfig := os.Getenv(kubeconfigEnv)
	_, bins, err := controlplane.EnsureRepoBinaries(ctx, os.Stderr)
	if err != nil {
		return nil, err
	}
	begin := time.Now()
	a, err := controlplane.EnsureArgoCD(ctx, os.Stderr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "argocd: binary ready in %s\n", time.Since(begin).Round(time.Millisecond))
	dir, err := os.MkdirTemp("", "confighash-argocd-")
	if err != nil {
		return nil, fmt.Errorf("creating Argo CD's directory: %w", err)
	}
	begin = time.Now()
	run, err := controlplane.StartArgoCD(ctx, a, controlplane.ArgoCDOptions{Kubeconfig: kubeconfig, Kubectl: bins.Kubectl, Dir: dir}, os.Stderr)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(os.Stderr, "argocd: installed and started in %s (%s; logs in %s)\n", time.Since(begin).Round(time.Millisecond), run, dir)
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", kubeconfig, err)
	}
	apps, err := appclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("building Argo CD's clientset: %w", err)
	}
	// The client logs nothing the specs need; without a logger it prints
	// a warning with a stack trace instead.
	ctrllog.SetLogger(logr.Discard())
	c, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	if err != nil {
		return nil, fmt.Errorf("building a client: %w", err)
	}
	env := &framework.Env{Kubeconfig: kubeconfig, KubectlPath: bins.Kubectl, Config: cfg, Client: c, SpecTimeout: 5 * time.Minute}
	return &argoCD{run: run, apps: apps, env: env, dir: dir}, nil
}

// stopArgoCD stops what startArgoCD started, if anything; a failed run
// keeps the logs and says where they are.
func stopArgoCD(failed bool) error {
	a := controller.argo
	if a == nil {
		return nil
	}
	if failed {
		for _, l := range a.run.Logs() {
			if text, err := controlplane.TailFile(l, 40); err == nil {
				fmt.Fprintf(os.Stderr, "--- last lines of %s ---\n%s\n", l, text)
			}
		}
	}
	err := a.run.Stop()
	if !failed {
		err = errors.Join(err, os.RemoveAll(a.dir))
	}
	return err
}

// logsOnFailure quotes the controller's log when the spec failed.
func (a *argoCD) logsOnFailure(t *testing.T) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		logs := a.run.Logs()
		if len(logs) == 0 {
			return
		}
		if text, err := controlplane.TailFile(logs[0], 60); err == nil {
			t.Logf("--- last lines of %s ---\n%s", logs[0], strings.TrimSpace(text))
		}
	})
}
