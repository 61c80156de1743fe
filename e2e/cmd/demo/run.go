package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/cmd/confighash/app"
	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/e2e/images"
	"github.com/confighash/confighash/internal/contract"
)

const ns = "demo"

// greeters read the greeting, in the order the waves take them: api is the
// canary (confighash.dev/rollout-order: "-1"). billing reads only the
// password.
var greeters = []struct{ name, order string }{{"api", "-1"}, {"web", "0"}, {"worker", "0"}}

func run(ctx context.Context, out io.Writer) error {
	if os.Getenv(framework.KubeconfigEnv) != "" {
		return fmt.Errorf("the demo runs on its own local control plane; unset %s", framework.KubeconfigEnv)
	}
	step(out, "Starting a local cluster with a real node (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, containerd, kubelet, kube-proxy)")
	env, err := framework.SetupNodeWith(ctx, os.Stderr, framework.NodeOptions{Platforms: images.HostPlatforms()})
	if err != nil {
		return err
	}
	defer func() {
		step(out, "Stopping everything")
		if err := env.Teardown(); err != nil {
			fmt.Fprintln(out, "teardown:", err)
		}
	}()
	dir, err := os.MkdirTemp("", "confighash-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	d := &demo{env: env.Env, out: out, ctx: ctx, dir: dir}

	step(out, "Deploy confighash as a user does: the self-managed overlay, with the locally built image")
	if err := env.Deploy(ctx, framework.SelfManagedOverlay); err != nil {
		return err
	}
	begin := time.Now()
	d.kubectl("", "get", "pods", "-n", framework.Namespace, "-o", "wide")

	step(out, "Label a namespace for injection; apply a ConfigMap and a Secret, three readers of the greeting (api, web, worker) and one of the password (billing)")
	d.kubectl("", "create", "namespace", ns)
	d.kubectl("", "label", "namespace", ns, contract.InjectionLabel+"="+contract.InjectionEnabled)
	d.kubectl(configYAML, "apply", "-n", ns, "-f", "-")
	for _, g := range greeters {
		d.kubectl(strings.NewReplacer("NAME", g.name, "ORDER", g.order).Replace(deploymentYAML), "apply", "-n", ns, "-f", "-")
	}
	d.kubectl(billingYAML, "apply", "-n", ns, "-f", "-")
	d.rolledOut("api", "web", "worker", "billing")
	step(out, "The webhook stamped each pod template with a keyed checksum of exactly what its pods read")
	d.kubectl("", "get", "deployments", "-n", ns, "-o", `custom-columns=NAME:.metadata.name,CHECKSUM:.spec.template.metadata.annotations.confighash\.dev/checksum`)
	d.logs("web")

	step(out, "Change a key nobody reads: nothing rolls")
	d.kubectl("", "patch", "configmap", "web-config", "-n", ns, "--type=merge", "-p", `{"data":{"unused":"changed"}}`)
	d.settle()
	d.kubectl("", "get", "replicasets", "-n", ns)

	step(out, "Before changing the greeting, preview says who rolls, in which wave")
	d.preview(greeting("hola"))

	step(out, "Change the greeting: the canary rolls first, then the others once it is healthy; billing does not roll")
	d.kubectl(greeting("hola"), "apply", "-n", ns, "-f", "-")
	d.restamps([]string{"api", "web", "worker"}, "billing")
	d.rolledOut("api", "web", "worker")
	d.logs("web")

	step(out, "A broken greeting: the canary's new pod refuses it and crashes, the change halts there; web and worker keep their pods and the old value")
	d.preview(greeting("broken"))
	d.kubectl(greeting("broken"), "apply", "-n", ns, "-f", "-")
	d.restamps([]string{"api"})
	d.halted("api")
	d.settle()
	d.kubectl("", "get", "replicasets", "-n", ns)
	d.kubectl("", "get", "pods", "-n", ns, "-o", "custom-columns=POD:.metadata.name,READY:.status.containerStatuses[0].ready,RESTARTS:.status.containerStatuses[0].restartCount")
	d.logs("web")

	step(out, "confighash status explains it: api halted, web and worker waiting for a fix")
	d.confighash("status", "-n", ns)

	step(out, "The fix: a new greeting rolls everyone. api, failing since the broken value, gets it at once and unjudged; web is the canary now")
	d.kubectl(greeting("bonjour"), "apply", "-n", ns, "-f", "-")
	d.restamps([]string{"api", "web", "worker"}, "billing")
	d.rolledOut("api", "web", "worker")
	d.logs("api")
	d.logs("worker")
	d.confighash("status", "-n", ns)

	step(out, "The Events name the sources that changed and the halt, never a value")
	d.kubectl("", "get", "events", "-n", ns, "--field-selector", "reportingComponent="+contract.EventSource, "--sort-by=.lastTimestamp",
		"-o", "custom-columns=OBJECT:.involvedObject.name,TYPE:.type,REASON:.reason,MESSAGE:.message")
	if d.err == nil {
		fmt.Fprintf(out, "\nThe story took %s once confighash was deployed.\n", time.Since(begin).Round(time.Second))
	}
	return d.err
}

// greeting is the ConfigMap alone (config.yaml's first object) with a new
// greeting, as a user would apply it.
func greeting(v string) string {
	cm, _, _ := strings.Cut(configYAML, "\n---\n")
	return strings.Replace(cm, "greeting: hello", "greeting: "+v, 1) + "\n"
}

func step(out io.Writer, msg string) {
	fmt.Fprintf(out, "\n==> %s\n", msg)
}

// demo runs and echoes commands; the first failure stops the rest.
type demo struct {
	env *framework.Env
	out io.Writer
	ctx context.Context
	dir string
	err error
}

func (d *demo) kubectl(stdin string, args ...string) {
	if d.err != nil {
		return
	}
	fmt.Fprintf(d.out, "$ kubectl %s\n", strings.Join(args, " "))
	cmd := exec.CommandContext(d.ctx, d.env.KubectlPath, append([]string{"--kubeconfig", d.env.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	b, err := cmd.CombinedOutput()
	fmt.Fprint(d.out, string(b))
	if err != nil {
		d.err = fmt.Errorf("kubectl %s: %w", strings.Join(args, " "), err)
	}
}

// confighash runs the confighash CLI in process, as `kubectl confighash`
// would. status exits 1 when something needs attention: that is shown, not
// a failure of the demo.
func (d *demo) confighash(args ...string) { d.confighashShown(args, args...) }

// confighashShown is confighash, echoed as shown (a file by its base name).
func (d *demo) confighashShown(shown []string, args ...string) {
	if d.err != nil {
		return
	}
	fmt.Fprintf(d.out, "$ kubectl confighash %s\n", strings.Join(shown, " "))
	var stdout, stderr bytes.Buffer
	err := app.Run(d.ctx, append(args, "--kubeconfig", d.env.Kubeconfig), &stdout, &stderr)
	fmt.Fprint(d.out, stdout.String())
	if err != nil && stdout.Len() == 0 {
		d.err = fmt.Errorf("confighash %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
}

// preview writes manifest to a file and previews it.
func (d *demo) preview(manifest string) {
	if d.err != nil {
		return
	}
	file := filepath.Join(d.dir, "web-config.yaml")
	if err := os.WriteFile(file, []byte(manifest), 0o600); err != nil {
		d.err = err
		return
	}
	fmt.Fprintf(d.out, "$ grep greeting web-config.yaml\n%s\n", grepLine(manifest, "greeting:"))
	d.confighashShown([]string{"preview", "-f", "web-config.yaml", "-n", ns}, "preview", "-f", file, "-n", ns)
}

func grepLine(text, prefix string) string {
	for l := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimSpace(l), prefix) {
			return strings.TrimRight(l, "\n")
		}
	}
	return ""
}

// rolledOut waits for each Deployment's rollout, as kubectl does.
func (d *demo) rolledOut(names ...string) {
	for _, n := range names {
		d.kubectl("", "rollout", "status", "deployment/"+n, "-n", ns, "--timeout=2m")
	}
}

// restamps watches the Deployments' stamps and prints when each of want is
// re-stamped, until all are; the others must keep theirs meanwhile.
func (d *demo) restamps(want []string, others ...string) {
	if d.err != nil {
		return
	}
	start := time.Now()
	before := map[string]string{}
	for _, n := range append(append([]string{}, want...), others...) {
		before[n] = d.stamp(n)
	}
	fmt.Fprintln(d.out, "(watching the stamps)")
	seen := map[string]bool{}
	for len(seen) < len(want) && d.err == nil {
		if time.Since(start) > 2*time.Minute {
			d.err = fmt.Errorf("only %d of %v re-stamped after 2 minutes", len(seen), want)
			return
		}
		for _, n := range want {
			if !seen[n] && d.stamp(n) != before[n] {
				seen[n] = true
				fmt.Fprintf(d.out, "  +%4.1fs  deployment/%s re-stamped\n", time.Since(start).Seconds(), n)
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	for _, n := range others {
		if d.stamp(n) != before[n] {
			d.err = fmt.Errorf("deployment/%s was re-stamped, and it does not read the greeting", n)
			return
		}
		fmt.Fprintf(d.out, "  deployment/%s keeps its stamp: it does not read the greeting\n", n)
	}
}

// halted waits for the hook's halt on name.
func (d *demo) halted(name string) {
	start := time.Now()
	for d.err == nil {
		dep := &appsv1.Deployment{}
		if err := d.env.Client.Get(d.ctx, client.ObjectKey{Namespace: ns, Name: name}, dep); err == nil && dep.Annotations[contract.HaltAnnotation] != "" {
			fmt.Fprintf(d.out, "  +%4.1fs  deployment/%s halted (%s)\n", time.Since(start).Seconds(), name, contract.HaltAnnotation)
			return
		}
		if time.Since(start) > 2*time.Minute {
			d.err = fmt.Errorf("deployment/%s did not halt within 2 minutes", name)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (d *demo) stamp(name string) string {
	dep := &appsv1.Deployment{}
	if err := d.env.Client.Get(d.ctx, client.ObjectKey{Namespace: ns, Name: name}, dep); err != nil {
		d.err = fmt.Errorf("reading deployment/%s: %w", name, err)
		return ""
	}
	return dep.Spec.Template.Annotations[contract.ChecksumAnnotation]
}

// logs shows the log of the Deployment's newest running pod, once it has
// printed what it read (its two lines).
func (d *demo) logs(app string) {
	deadline := time.Now().Add(30 * time.Second)
	for d.err == nil {
		cmd := exec.CommandContext(d.ctx, d.env.KubectlPath, "--kubeconfig", d.env.Kubeconfig, "get", "pods", "-n", ns, "-l", "app="+app,
			"--field-selector=status.phase=Running", "--sort-by=.metadata.creationTimestamp", "-o", "name")
		b, err := cmd.Output()
		names := strings.Fields(string(b))
		if err == nil && len(names) > 0 {
			pod := names[len(names)-1]
			logs := exec.CommandContext(d.ctx, d.env.KubectlPath, "--kubeconfig", d.env.Kubeconfig, "logs", "-n", ns, pod)
			if lb, err := logs.Output(); err == nil && strings.Count(string(lb), "\n") >= 2 {
				d.kubectl("", "logs", "-n", ns, pod)
				return
			}
		}
		if time.Now().After(deadline) {
			d.err = fmt.Errorf("timed out waiting for the %s pod's log", app)
			return
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// settle gives the hook longer than its coalescing window to act, so that
// "nothing rolled" is shown, not assumed.
func (d *demo) settle() { time.Sleep(3 * time.Second) }
