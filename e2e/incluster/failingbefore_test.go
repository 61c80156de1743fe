//go:build e2e

package incluster

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/cmd/confighash/app"
	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/preview"
	"github.com/confighash/confighash/internal/status"
)

// unpullable is an image the node cannot pull (it has no registry to pull
// from): a reader made of it is failing before any config change, as a
// Deployment with a bad image tag is in any large cluster.
const unpullable = "registry.confighash.invalid/absent:0"

// waitPodWaiting waits until a pod of Deployment d has a container waiting
// for one of reasons, and returns that reason.
func waitPodWaiting(t *testing.T, d *appsv1.Deployment, reasons ...string) string {
	t.Helper()
	var got string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		l := &corev1.PodList{}
		if err := env.Client.List(ctx, l, client.InNamespace(d.Namespace), client.MatchingLabels(d.Spec.Selector.MatchLabels)); err != nil {
			return false, err
		}
		for _, p := range l.Items {
			for _, c := range p.Status.ContainerStatuses {
				if w := c.State.Waiting; w != nil && slices.Contains(reasons, w.Reason) {
					got = w.Reason
					return true, nil
				}
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("%s: no pod waiting for %v", d.Name, reasons)
	}
	return got
}

// annotationOf reads d back and returns one of its own annotations.
func annotationOf(t *testing.T, obj client.Object, key string) string {
	t.Helper()
	if err := env.Client.Get(env.SpecContext(t), client.ObjectKeyFromObject(obj), obj); err != nil {
		t.Fatal(err)
	}
	return obj.GetAnnotations()[key]
}

// TestFailingReaderIsNotTheCanary: two readers share a ConfigMap. The one
// ordered first cannot pull its image, before any change. A change of the
// ConfigMap goes to the other, a Deployment reading the key through volume
// items, which rolls and prints the new value; the failing one gets the
// change too, its rollout is not judged (its record and a FailingBefore
// Event say so), and nothing halts.
func TestFailingReaderIsNotTheCanary(t *testing.T) {
	ns, cm, broken := failingFirst(t, "shared")
	web := deployment(ns, "web", 1, modeFileReader("shared"))
	env.Create(t, broken)
	env.Create(t, web)
	if err := env.WaitRollout(env.SpecContext(t), ns, web.Name, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	t.Logf("broken, before the change: %s", waitPodWaiting(t, broken, "ErrImagePull", "ImagePullBackOff"))
	brokenStamp := env.StampOf(t, broken)
	webRS := env.CurrentReplicaSet(t, ns, web.Name)
	expectPreview(t, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  namespace: "+ns+"\ndata:\n  mode: two\n",
		map[string]string{"deployment/broken": "failing", "deployment/web": "1"})

	changed := time.Now()
	env.Update(t, cm, func() { cm.Data["mode"] = "two" })
	rs := waitNewReplicaSet(t, web, webRS)
	t.Logf("web re-stamped %s after the change", time.Since(changed).Round(100*time.Millisecond))
	if err := env.WaitRollout(env.SpecContext(t), ns, web.Name, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	pod, _ := runningPod(t, ns, rs)
	if got := podLog(t, ns, pod, 1); !slices.Contains(got, "file:/config/mode=two") {
		t.Errorf("web's new pod printed %q, want file:/config/mode=two", got)
	}
	if env.StampOf(t, broken) == brokenStamp {
		t.Error("the failing reader did not get the change")
	}
	rec, err := contract.ParseRollout(contract.Unsealed(annotationOf(t, broken, contract.RolloutAnnotation)))
	if err != nil || rec.Failing == "" {
		t.Errorf("broken's rollout record %+v (%v): want it to say it was failing", rec, err)
	}
	waitEvent(t, broken, contract.ReasonFailingBefore)
	var stdout, stderr bytes.Buffer
	if err := app.Run(env.SpecContext(t), []string{"status", "-n", ns, "-o", "json", "--kubeconfig", env.Kubeconfig,
		"--namespace-of-confighash", framework.Namespace}, &stdout, &stderr); err != nil && stdout.Len() == 0 {
		t.Fatalf("status: %v\n%s", err, stderr.String())
	}
	var st status.Report
	if err := json.Unmarshal(stdout.Bytes(), &st); err != nil {
		t.Fatalf("decoding status: %v\n%s", err, stdout.String())
	}
	for _, w := range st.Workloads {
		if w.Name == "broken" {
			t.Logf("status of broken: %s: %s", w.State, w.Reason)
			if w.Rollout == nil || w.Rollout.Failing == "" || !strings.Contains(w.Reason, "failing before the change") {
				t.Errorf("status does not show broken was failing before the change: %s, %+v", w.Reason, w.Rollout)
			}
		}
	}
	// Well past the failing reader's next look: still no halt.
	time.Sleep(settle)
	for _, d := range []*appsv1.Deployment{broken, web} {
		if h := annotationOf(t, d, contract.HaltAnnotation); h != "" {
			t.Errorf("%s carries a halt: %s", d.Name, h)
		}
	}
}

// TestHaltedReaderGetsTheNextChange: a lone reader of a ConfigMap and a
// Secret gets a change of both at once whose value its program refuses;
// its rollout fails and halts both (as a re-check's re-stamp, which cannot
// tell which source changed, halts every source it read). The next change
// of the ConfigMap, the fix, reaches it within the coalescing window plus
// a moment, and it rolls out printing the fixed value.
func TestHaltedReaderGetsTheNextChange(t *testing.T) {
	ns := env.NewNamespace(t, true)
	cm := sharedConfig(t, ns, map[string]string{"mode": "good"})
	secret := &corev1.Secret{}
	secret.Namespace, secret.Name, secret.Data = ns, "token", map[string][]byte{"token": []byte("a")}
	env.Create(t, secret)
	d := picky(ns, "lone")
	c := &d.Spec.Template.Spec.Containers[0]
	c.Env = append(c.Env, corev1.EnvVar{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "token"}, Key: "token"}}})
	env.Create(t, d)
	if err := env.WaitRollout(env.SpecContext(t), ns, d.Name, 3*time.Minute); err != nil {
		t.Fatal(err)
	}

	env.Update(t, cm, func() { cm.Data["mode"] = "bad" })
	env.Update(t, secret, func() { secret.Data["token"] = []byte("b") })
	var halt string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 250*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		halt = annotationOf(t, d, contract.HaltAnnotation)
		return halt != "", nil
	})
	if err != nil {
		t.Fatal("no halt after the bad value")
	}
	h, err := contract.ParseHalt(contract.Unsealed(halt))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("halted: %+v", h)
	stamp := env.StampOf(t, d)

	changed := time.Now()
	env.Update(t, cm, func() { cm.Data["mode"] = "fixed" })
	err = wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return env.StampOf(t, d) != stamp, nil
	})
	took := time.Since(changed)
	if err != nil {
		t.Fatalf("the fix did not reach the halted reader within %s", took.Round(time.Second))
	}
	t.Logf("the fix reached the halted reader %s after the change", took.Round(100*time.Millisecond))
	// The coalescing window (1 s) plus a second, with room for a loaded
	// machine's apiserver and informers.
	if took > 4*time.Second {
		t.Errorf("the fix took %s to reach the halted reader, want about the coalescing window plus a second", took.Round(100*time.Millisecond))
	}
	if err := env.WaitRollout(env.SpecContext(t), ns, d.Name, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	pod, _ := runningPod(t, ns, env.CurrentReplicaSet(t, ns, d.Name))
	if got := podLog(t, ns, pod, 1); !slices.Contains(got, "env:MODE=fixed") {
		t.Errorf("the pod printed %q, want env:MODE=fixed", got)
	}
}

// expectPreview runs confighash preview on text, a changed ConfigMap, and
// checks how each workload of want rolls: its wave, or "failing" for one
// listed at once as failing before the change.
func expectPreview(t *testing.T, text string, want map[string]string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "source.yaml")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := app.Run(env.SpecContext(t), []string{"preview", "-f", file, "-o", "json", "--kubeconfig", env.Kubeconfig,
		"--namespace-of-confighash", framework.Namespace}, &stdout, &stderr); err != nil {
		t.Fatalf("preview: %v\n%s", err, stderr.String())
	}
	var rep preview.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("decoding the json: %v\n%s", err, stdout.String())
	}
	got := map[string]string{}
	for _, r := range rep.Rolling {
		got[r.Ref] = strconv.Itoa(r.Wave)
		if r.Failing != "" {
			got[r.Ref] = "failing"
		}
	}
	for ref, w := range want {
		if got[ref] != w {
			t.Errorf("preview: %s rolls %q, want %q (all: %v)", ref, got[ref], w, got)
		}
	}
}

// testFailingReaderBeforeARollout (in TestRolloutsCanaryOnNode, which runs
// the Rollouts controller): the other reader is an Argo Rollout. The
// Deployment ordered first cannot pull its image; a change of the
// ConfigMap goes to the Rollout, which rolls to Healthy with its pod
// printing the new value, and nothing halts.
func testFailingReaderBeforeARollout(t *testing.T) {
	ns, cm, broken := failingFirst(t, "settings")
	env.Create(t, broken)
	ro := framework.CanaryRollout(ns, "reader", 1, modeReader("settings"))
	env.Create(t, ro)
	stable := waitHealthy(t, ro).StableRS
	t.Logf("broken, before the change: %s", waitPodWaiting(t, broken, "ErrImagePull", "ImagePullBackOff"))
	before := env.StampOf(t, ro)

	changed := time.Now()
	env.Update(t, cm, func() { cm.Data["mode"] = "two" })
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 250*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		return env.StampOf(t, ro) != before, nil
	})
	if err != nil {
		t.Fatal("the Rollout was not re-stamped: the failing Deployment held the change back")
	}
	t.Logf("the Rollout re-stamped %s after the change", time.Since(changed).Round(100*time.Millisecond))
	s := waitRollout(t, ro, "Healthy on a new template", rolloutWait, func(s rolloutState) bool {
		return s.Phase == "Healthy" && s.StableRS != "" && s.StableRS == s.CurrentPodHash && s.StableRS != stable
	})
	expectMode(t, ns, waitPods(t, ro, s.StableRS, 1), "two")
	if h := annotationOf(t, broken, contract.HaltAnnotation); h != "" {
		t.Errorf("broken carries a halt: %s", h)
	}
}

// failingFirst makes a namespace with ConfigMap name (mode=one) and returns
// it with a Deployment of it, not yet created, that reads the ConfigMap,
// cannot pull its image, and is ordered first.
func failingFirst(t *testing.T, name string) (string, *corev1.ConfigMap, *appsv1.Deployment) {
	t.Helper()
	ns := env.NewNamespace(t, true)
	cm := &corev1.ConfigMap{}
	cm.Namespace, cm.Name, cm.Data = ns, name, map[string]string{"mode": "one"}
	env.Create(t, cm)
	spec := modeReader(name)
	spec.Containers[0].Image = unpullable
	broken := deployment(ns, "broken", 1, spec)
	broken.Annotations = map[string]string{contract.RolloutOrderAnnotation: "-1"}
	return ns, cm, broken
}
