//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/cmd/confighash/app"
	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/status"
)

// statusResult is one in-process run of `confighash status`.
type statusResult struct {
	stdout, stderr string
	code           int
	err            error
}

// runStatus runs the binary's own code for `confighash status args…`
// against the e2e cluster.
func runStatus(t *testing.T, args ...string) statusResult {
	t.Helper()
	var stdout, stderr bytes.Buffer
	full := append([]string{"status", "--kubeconfig", env.Kubeconfig, "--namespace-of-confighash", framework.Namespace}, args...)
	err := app.Run(env.SpecContext(t), full, &stdout, &stderr)
	r := statusResult{stdout: stdout.String(), stderr: stderr.String(), err: err}
	if err != nil {
		r.code = app.ExitCode(err)
	}
	t.Logf("confighash %s: exit %d (%v)\n%s%s", strings.Join(full, " "), r.code, err, r.stdout, r.stderr)
	return r
}

// statusOf runs `confighash status KIND/NAME -n ns -o json` with more
// flags, checks the exit code and returns the one workload reported.
func statusOf(t *testing.T, ns, ref string, wantCode int, flags ...string) status.Workload {
	t.Helper()
	r := runStatus(t, append([]string{ref, "-n", ns, "-o", "json"}, flags...)...)
	if r.code != wantCode {
		t.Fatalf("exit code %d (%v), want %d", r.code, r.err, wantCode)
	}
	var rep status.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("decoding json output: %v\n%s", err, r.stdout)
	}
	if len(rep.Workloads) != 1 {
		t.Fatalf("want one workload, got %+v", rep.Workloads)
	}
	return rep.Workloads[0]
}

// statusFixture is a namespace, labelled or not, with ConfigMap cfg,
// Secret sec and Deployment web reading both through podSpec.
func statusFixture(t *testing.T, labelled bool) (ns string, sec *corev1.Secret) {
	t.Helper()
	ns = env.NewNamespace(t, labelled)
	env.Create(t, configMap(ns, "cfg", map[string]string{"greeting": "status-e2e-cm-value"}))
	sec = secret(ns, "sec", map[string]string{"password": "status-e2e-secret-value"})
	env.Create(t, sec)
	env.Create(t, deploymentOf(ns, "web", podSpec("cfg", "sec")))
	if labelled {
		// status asks the webhook with a dry-run, which reads the cache
		// only: let it catch up with the sources just created.
		dryRunUntilCached(t, ns, podSpec("cfg", "sec"))
	}
	return ns, sec
}

// expectNoValues fails if a config value from statusFixture shows up.
func expectNoValues(t *testing.T, out string) {
	t.Helper()
	for _, v := range []string{"status-e2e-cm-value", "status-e2e-secret-value"} {
		if strings.Contains(out, v) {
			t.Errorf("output contains the config value %q:\n%s", v, out)
		}
	}
}

// setStaleStamp writes a bogus stamp straight into the template, as a JSON
// merge patch under confighash's own field manager: the webhook lets a
// stamp-only change through only from the hook, so this stands in for a hook
// that wrote a stamp the sources no longer give. No source changes, so the
// hook leaves it. The bogus stamp keeps the current format and key ID (the
// webhook lets no write set a legacy v1 stamp, and one under another key
// would be "unknown", not stale).
func setStaleStamp(t *testing.T, ns, name string) string {
	t.Helper()
	d := deploymentOf(ns, name, corev1.PodSpec{})
	current := env.StampOf(t, d)
	bogus := current[:strings.LastIndex(current, ":")+1] + strings.Repeat("0", 64)
	patch := fmt.Sprintf(`{"spec":{"template":{"metadata":{"annotations":{%q:%q}}}}}`, contract.ChecksumAnnotation, bogus)
	if err := env.Client.Patch(env.SpecContext(t), d, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner(contract.FieldManager)); err != nil {
		t.Fatalf("patching the stamp: %v", err)
	}
	if got := env.StampOf(t, d); got != bogus {
		t.Fatalf("stamp after the patch = %q, want %q", got, bogus)
	}
	return bogus
}

func TestStatusCurrent(t *testing.T) {
	ns, _ := statusFixture(t, true)
	d := deploymentOf(ns, "web", corev1.PodSpec{})
	stamp := env.StampOf(t, d)

	t.Run("table", func(t *testing.T) {
		r := runStatus(t, "deployment/web", "-n", ns)
		if r.code != 0 {
			t.Fatalf("exit code %d (%v), want 0", r.code, r.err)
		}
		for _, want := range []string{"deployment/web", "current", "configmap/cfg", "secret/sec", "password", stamp} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("output lacks %q", want)
			}
		}
		expectNoValues(t, r.stdout+r.stderr)
	})

	t.Run("json", func(t *testing.T) {
		w := statusOf(t, ns, "web", 0)
		if w.State != status.StateCurrent || w.Injection.State != status.InjectionOn ||
			w.StampedChecksum != stamp || w.ExpectedChecksum != stamp {
			t.Errorf("got %+v", w)
		}
		if len(w.Sources) != 2 || w.Sources[0].Presence != status.Present || w.Sources[1].Presence != status.Present ||
			w.Sources[0].Keys[0] != status.AllKeys || w.Sources[1].Keys[0] != "password" {
			t.Errorf("sources = %+v", w.Sources)
		}
	})

	t.Run("namespace and all namespaces", func(t *testing.T) {
		if r := runStatus(t, "-n", ns); r.code != 0 || !strings.Contains(r.stdout, "current") {
			t.Errorf("namespace listing: exit %d", r.code)
		}
		r := runStatus(t, "-A", "-o", "json")
		var rep status.Report
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, w := range rep.Workloads {
			found = found || (w.Namespace == ns && w.Name == "web" && w.State == status.StateCurrent)
		}
		if !found {
			t.Errorf("-A does not list %s/web as current", ns)
		}
		expectNoValues(t, r.stdout)
	})

	t.Run("dry run leaves nothing behind", func(t *testing.T) {
		err := env.Client.Get(env.SpecContext(t), client.ObjectKey{Namespace: ns, Name: "web-chstatus"}, deploymentOf(ns, "", corev1.PodSpec{}))
		if !apierrors.IsNotFound(err) {
			t.Errorf("reading the dry-run copy: %v, want not found", err)
		}
	})
}

func TestStatusStale(t *testing.T) {
	ns, _ := statusFixture(t, true)
	bogus := setStaleStamp(t, ns, "web")
	w := statusOf(t, ns, "deployment/web", 1)
	if w.State != status.StateStale || w.StampedChecksum != bogus || w.ExpectedChecksum == "" || w.ExpectedChecksum == bogus {
		t.Errorf("got %+v", w)
	}
	if r := runStatus(t, "deployment/web", "-n", ns); r.code != 1 || !strings.Contains(r.stdout, "stale") {
		t.Errorf("table run: exit %d, want 1 and stale", r.code)
	}
}

// wellSealed gives a record value a well-formed seal, as the hook writes
// it: status has no key and shows it unverified (one without a seal it
// shows ignored, as the hook ignores it). The hook in the cluster, which
// checks the seal, ignores it: no source changes here.
func wellSealed(v string) string { return v + " mac=" + strings.Repeat("0", 64) }

func TestStatusHeld(t *testing.T) {
	ns, _ := statusFixture(t, true)
	setStaleStamp(t, ns, "web")
	// The hold the hook's flap guard keeps on the workload, written as it
	// writes it: the annotation, not an Event, is what held is decided on.
	hold := contract.Hold{Since: time.Now().UTC().Truncate(time.Second), Level: 1, Quiet: 2 * time.Minute}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, contract.HoldAnnotation, wellSealed(hold.String()))
	d := deploymentOf(ns, "web", corev1.PodSpec{})
	if err := env.Client.Patch(env.SpecContext(t), d, client.RawPatch(types.MergePatchType, []byte(patch)), client.FieldOwner(contract.FieldManager)); err != nil {
		t.Fatalf("writing the hold: %v", err)
	}
	w := statusOf(t, ns, "deployment/web", 1)
	if w.State != status.StateHeld || w.Hold == nil || w.Hold.Level != 1 || w.Hold.Quiet != "2m0s" ||
		!w.Hold.Since.Equal(hold.Since) || !strings.Contains(w.Reason, "held the workload since") {
		t.Errorf("got %+v", w)
	}
}

// TestStatusHalt: a halt the hook keeps on a reader whose rollout failed
// (written here as the hook writes it) shows on that reader, halted, and on
// a stale reader of the same ConfigMap, waiting; released, it holds back
// nobody. No source changes, so the hook leaves both stamps.
func TestStatusHalt(t *testing.T) {
	ns, _ := statusFixture(t, true)
	env.Create(t, deploymentOf(ns, "canary", podSpec("cfg", "sec")))
	since := time.Now().UTC().Truncate(time.Second)
	change := contract.Change{Source: "configmap/cfg", Content: "0123456789abcdef"}
	halt := contract.Halt{Since: since, Changes: []contract.Change{change}, Reason: "CrashLoopBackOff"}
	rollout := contract.Rollout{Since: since.Add(-time.Minute), Changes: []contract.Change{change}}
	setAnnotations := func(name string, kv ...string) {
		t.Helper()
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": m}})
		if err != nil {
			t.Fatal(err)
		}
		d := deploymentOf(ns, name, corev1.PodSpec{})
		if err := env.Client.Patch(env.SpecContext(t), d, client.RawPatch(types.MergePatchType, patch), client.FieldOwner(contract.FieldManager)); err != nil {
			t.Fatalf("annotating %s: %v", name, err)
		}
	}
	setAnnotations("canary", contract.HaltAnnotation, wellSealed(halt.String()), contract.RolloutAnnotation, wellSealed(rollout.String()))
	setStaleStamp(t, ns, "web")

	// The confighash here runs without waves (--max-wave-size=0, which it
	// publishes), and so honours no halt: status shows none.
	if w := statusOf(t, ns, "deployment/web", 1); w.State != status.StateStale || len(w.HaltedChanges) != 0 {
		t.Errorf("web, without waves: %+v, want stale: no halt holds it back", w)
	}
	// As a confighash with waves would see them.
	const waves = "--max-wave-size=16"
	canary := statusOf(t, ns, "deployment/canary", 1, waves)
	if canary.State != status.StateHalted || canary.Halt == nil || canary.Halt.Reason != "CrashLoopBackOff" ||
		!canary.Halt.Since.Equal(since) || len(canary.Halt.Changes) != 1 || canary.Halt.Changes[0] != change.String() ||
		!strings.Contains(canary.Reason, "its rollout for configmap/cfg failed (CrashLoopBackOff since") ||
		canary.Rollout == nil || !canary.Rollout.Since.Equal(rollout.Since) {
		t.Errorf("canary: %+v", canary)
	}
	// Named, web is found waiting through the namespace's workload list.
	const waiting = "waiting: change of configmap/cfg halted at deployment/canary (CrashLoopBackOff)"
	web := statusOf(t, ns, "deployment/web", 1, waves)
	if web.State != status.StateWaiting || !strings.HasPrefix(web.Reason, waiting) ||
		len(web.HaltedChanges) != 1 || web.HaltedChanges[0].Workload != "deployment/canary" {
		t.Errorf("web: %+v", web)
	}
	r := runStatus(t, "-n", ns, waves)
	if r.code != 1 || !hasStateLine(r.stdout, "deployment/canary", "halted", "its rollout for configmap/cfg failed") ||
		!hasStateLine(r.stdout, "deployment/web", "waiting", waiting) {
		t.Errorf("table: exit %d, want 1, canary halted and web waiting", r.code)
	}
	if r := runStatus(t, "deployment/canary", "-n", ns, waves); !strings.Contains(r.stdout, "Last re-stamp:") ||
		!strings.Contains(r.stdout, "for configmap/cfg (sealed, unverified)\n") || !strings.Contains(r.stdout, ", CrashLoopBackOff, for configmap/cfg (sealed, unverified)\n") {
		t.Errorf("canary's details lack its halt or rollout record")
	}
	expectNoValues(t, r.stdout+r.stderr)

	t.Run("released", func(t *testing.T) {
		setAnnotations("canary", contract.HaltAnnotation, contract.HaltReleased)
		if w := statusOf(t, ns, "deployment/canary", 0, waves); w.State != status.StateCurrent || w.Halt == nil || !w.Halt.Released ||
			!strings.Contains(w.Reason, "released by hand") {
			t.Errorf("canary: %+v", w)
		}
		if w := statusOf(t, ns, "deployment/web", 1, waves); w.State != status.StateStale || len(w.HaltedChanges) != 0 {
			t.Errorf("web: %+v, want stale: a released halt holds back nobody", w)
		}
	})
}

// hasStateLine reports whether out has a table row for ref in state whose
// reason contains reason.
func hasStateLine(out, ref string, state status.State, reason string) bool {
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) > 2 && f[0] == ref && f[2] == string(state) && strings.Contains(line, reason) {
			return true
		}
	}
	return false
}

func TestStatusMissingSource(t *testing.T) {
	ns, sec := statusFixture(t, true)
	remove(t, sec)
	w := statusOf(t, ns, "deployment/web", 1)
	if w.State != status.StateMissingSource || !strings.Contains(w.Reason, "secret/sec") {
		t.Errorf("got %+v", w)
	}
	if len(w.Sources) != 2 || w.Sources[1].Presence != status.Absent {
		t.Errorf("sources = %+v", w.Sources)
	}
}

func TestStatusNotInjected(t *testing.T) {
	ns, _ := statusFixture(t, false)
	w := statusOf(t, ns, "deployment/web", 0)
	if w.State != status.StateNotInjected || w.Injection.State != status.InjectionOff || !strings.Contains(w.Reason, "not labelled") {
		t.Errorf("got %+v", w)
	}
	if r := runStatus(t, "-n", ns); r.code != 0 || !strings.Contains(r.stdout, "not-injected") {
		t.Errorf("table run: exit %d, want 0 and not-injected", r.code)
	}
}

func TestStatusCheckInstall(t *testing.T) {
	r := runStatus(t, "--check-install")
	if r.code != 0 || strings.Contains(r.stdout, "FAIL") {
		t.Fatalf("exit code %d (%v), want 0 and no FAIL", r.code, r.err)
	}
	for _, check := range []string{status.CheckWebhookConfiguration, status.CheckCABundle, status.CheckNamespaceSelector,
		status.CheckFailurePolicy, status.CheckReachable} {
		if !hasCheckLine(r.stdout, "ok", check) {
			t.Errorf("no ok line for %s", check)
		}
	}
	r = runStatus(t, "--check-install", "-o", "json")
	var rep status.InstallReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || !rep.OK || len(rep.Checks) != 5 {
		t.Errorf("json: %+v, %v", rep, err)
	}

	t.Run("wrong configuration name fails", func(t *testing.T) {
		r := runStatus(t, "--check-install", "--webhook-config-name", "no-such-config")
		if r.code != 1 || !hasCheckLine(r.stdout, "FAIL", status.CheckWebhookConfiguration) {
			t.Errorf("exit code %d, want 1 and a FAIL line", r.code)
		}
	})
}

func TestStatusUsageErrors(t *testing.T) {
	for name, args := range map[string][]string{
		"bad output":            {"-o", "yaml"},
		"bad kind":              {"job/x"},
		"two workloads":         {"a", "b"},
		"named with -A":         {"deployment/web", "-A"},
		"check-install with -A": {"--check-install", "-A"},
		"unknown flag":          {"--nope"},
	} {
		t.Run(name, func(t *testing.T) {
			if r := runStatus(t, args...); r.code != 2 {
				t.Errorf("exit code %d (%v), want 2", r.code, r.err)
			}
		})
	}
	t.Run("not found", func(t *testing.T) {
		ns := env.NewNamespace(t, true)
		if r := runStatus(t, "deployment/nope", "-n", ns); r.code != 1 || !strings.Contains(r.err.Error(), "not found") {
			t.Errorf("exit code %d (%v), want 1 and not found", r.code, r.err)
		}
	})
}

// hasCheckLine reports whether out has a line "VERDICT CHECK detail…".
func hasCheckLine(out, verdict, check string) bool {
	for line := range strings.Lines(out) {
		if f := strings.Fields(line); len(f) > 2 && f[0] == verdict && f[1] == check {
			return true
		}
	}
	return false
}

func TestStatusWebhookUnreachable(t *testing.T) {
	ns, _ := statusFixture(t, true)
	ctx := env.SpecContext(t)
	webhookUnreachable(t, ns)

	// The API server picks the change up asynchronously.
	var w status.Workload
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		w = statusOf(t, ns, "deployment/web", 0)
		return w.State == status.StateUnknown, nil
	})
	if err != nil {
		t.Fatalf("state = %s, want unknown", w.State)
	}
	if !strings.Contains(w.Reason, "--check-install") {
		t.Errorf("reason %q lacks the --check-install hint", w.Reason)
	}
	r := runStatus(t, "--check-install")
	if r.code != 1 || !hasCheckLine(r.stdout, "FAIL", status.CheckReachable) {
		t.Errorf("check-install: exit %d, want 1 and reachable FAIL", r.code)
	}
}

// TestStatusKubectlPlugin runs the built binary as `kubectl confighash`.
func TestStatusKubectlPlugin(t *testing.T) {
	ns, _ := statusFixture(t, true)
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	build := exec.CommandContext(env.SpecContext(t), "go", "build", "-o", filepath.Join(dir, "kubectl-confighash"), "./cmd/confighash")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the plugin: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"confighash", "deployment/web", "-n", ns, "--kubeconfig", env.Kubeconfig},
		{"confighash", "status", "-n", ns, "--kubeconfig", env.Kubeconfig},
	} {
		cmd := exec.CommandContext(env.SpecContext(t), env.KubectlPath, args...)
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "current") {
			t.Errorf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
