package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/internal/contract"
)

const ns = "demo"

func run(ctx context.Context, out io.Writer) error {
	if os.Getenv(framework.KubeconfigEnv) != "" {
		return fmt.Errorf("the demo runs on its own local control plane; unset %s", framework.KubeconfigEnv)
	}
	step(out, "Starting a local cluster with a real node (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, containerd, kubelet, kube-proxy)")
	env, err := framework.SetupNode(ctx, os.Stderr)
	if err != nil {
		return err
	}
	defer func() {
		step(out, "Stopping everything")
		if err := env.Teardown(); err != nil {
			fmt.Fprintln(out, "teardown:", err)
		}
	}()
	k := kubectl{env: env.Env, out: out, ctx: ctx}

	step(out, "Deploy confighash as a user does: the self-managed overlay, with the locally built image")
	if err := env.Deploy(ctx, framework.SelfManagedOverlay); err != nil {
		return err
	}
	k.run("", "get", "pods", "-n", framework.Namespace, "-o", "wide")

	step(out, "Label a namespace for injection and apply a sample app that reads a ConfigMap key and a Secret key")
	k.run("", "create", "namespace", ns)
	k.run("", "label", "namespace", ns, contract.InjectionLabel+"="+contract.InjectionEnabled)
	k.run(configYAML, "apply", "-n", ns, "-f", "-")
	k.run(deploymentYAML, "apply", "-n", ns, "-f", "-")

	step(out, "The webhook stamped the pod template with a keyed checksum of exactly what the pods read")
	k.run("", "get", "deployment", "web", "-n", ns, "-o", `jsonpath={.spec.template.metadata.annotations.confighash\.dev/checksum}{"\n"}`)
	k.waitReplicaSets(1)
	k.run("", "rollout", "status", "deployment/web", "-n", ns, "--timeout=2m")
	step(out, "The app printed what it read at start")
	k.logs()

	step(out, "Change a key nobody reads: nothing rolls")
	k.run("", "patch", "configmap", "web-config", "-n", ns, "--type=merge", "-p", `{"data":{"unused":"changed"}}`)
	k.settle()
	k.waitReplicaSets(1)
	k.run("", "get", "replicasets", "-n", ns)

	step(out, "Change the greeting: the hook re-stamps the Deployment and exactly one new ReplicaSet appears")
	k.run("", "patch", "configmap", "web-config", "-n", ns, "--type=merge", "-p", `{"data":{"greeting":"hola"}}`)
	k.waitReplicaSets(2)
	k.run("", "rollout", "status", "deployment/web", "-n", ns, "--timeout=2m")
	k.settle()
	k.run("", "get", "replicasets", "-n", ns)
	step(out, "The new pod prints the new greeting, from the environment and from the file")
	k.logs()

	step(out, "Re-apply the manifest, then replace the Deployment with it (the manifest has no checksum): nothing rolls")
	k.run(deploymentYAML, "apply", "-n", ns, "-f", "-")
	k.run(deploymentYAML, "replace", "-n", ns, "-f", "-")
	k.settle()
	k.waitReplicaSets(2)
	k.run("", "get", "replicasets", "-n", ns)
	k.run("", "rollout", "history", "deployment/web", "-n", ns)

	step(out, "Revert the greeting: the Deployment goes back to its first ReplicaSet (revision 3, no new ReplicaSet)")
	k.run("", "patch", "configmap", "web-config", "-n", ns, "--type=merge", "-p", `{"data":{"greeting":"hello"}}`)
	k.settle()
	k.waitReplicaSets(2)
	k.run("", "get", "replicasets", "-n", ns, "-o", `custom-columns=NAME:.metadata.name,REVISION:.metadata.annotations.deployment\.kubernetes\.io/revision,CHECKSUM:.spec.template.metadata.annotations.confighash\.dev/checksum`)
	k.run("", "rollout", "status", "deployment/web", "-n", ns, "--timeout=2m")
	step(out, "The pod of the first ReplicaSet prints the old greeting again")
	k.logs()

	step(out, "The ConfigChanged event names the source that changed, never its value")
	k.run("", "get", "events", "-n", ns, "--field-selector", "reason=ConfigChanged", "-o", "custom-columns=OBJECT:.involvedObject.name,TYPE:.type,REASON:.reason,MESSAGE:.message")
	return k.err
}

func step(out io.Writer, msg string) {
	fmt.Fprintf(out, "\n==> %s\n", msg)
}

// kubectl runs and echoes commands; the first failure stops the rest.
type kubectl struct {
	env *framework.Env
	out io.Writer
	ctx context.Context
	err error
}

func (k *kubectl) run(stdin string, args ...string) {
	if k.err != nil {
		return
	}
	fmt.Fprintf(k.out, "$ kubectl %s\n", strings.Join(args, " "))
	cmd := exec.CommandContext(k.ctx, k.env.KubectlPath, append([]string{"--kubeconfig", k.env.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	b, err := cmd.CombinedOutput()
	fmt.Fprint(k.out, string(b))
	if err != nil {
		k.err = fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
}

// waitReplicaSets waits until the Deployment has n ReplicaSets.
func (k *kubectl) waitReplicaSets(n int) {
	deadline := time.Now().Add(30 * time.Second)
	for k.err == nil {
		cmd := exec.CommandContext(k.ctx, k.env.KubectlPath, "--kubeconfig", k.env.Kubeconfig,
			"get", "replicasets", "-n", ns, "-l", "app=web", "-o", "name")
		b, err := cmd.Output()
		if err == nil && len(strings.Fields(string(b))) == n {
			return
		}
		if time.Now().After(deadline) {
			k.err = fmt.Errorf("timed out waiting for %d replicasets, have: %s", n, b)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// logs shows the log of the web Deployment's newest running pod, once it has
// printed all it read (its three lines).
func (k *kubectl) logs() {
	deadline := time.Now().Add(30 * time.Second)
	for k.err == nil {
		cmd := exec.CommandContext(k.ctx, k.env.KubectlPath, "--kubeconfig", k.env.Kubeconfig, "get", "pods", "-n", ns, "-l", "app=web",
			"--field-selector=status.phase=Running", "--sort-by=.metadata.creationTimestamp", "-o", "name")
		b, err := cmd.Output()
		names := strings.Fields(string(b))
		if err == nil && len(names) > 0 {
			pod := names[len(names)-1]
			logs := exec.CommandContext(k.ctx, k.env.KubectlPath, "--kubeconfig", k.env.Kubeconfig, "logs", "-n", ns, pod)
			if lb, err := logs.Output(); err == nil && strings.Count(string(lb), "\n") >= 3 {
				k.run("", "logs", "-n", ns, pod)
				return
			}
		}
		if time.Now().After(deadline) {
			k.err = fmt.Errorf("timed out waiting for the web pod's log")
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// settle gives the hook longer than its coalescing window to act, so that
// "nothing rolled" is shown, not assumed.
func (k *kubectl) settle() { time.Sleep(3 * time.Second) }
