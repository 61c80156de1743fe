//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/internal/contract"
)

// fixture is a labelled namespace with ConfigMap "cfg" (keys a, b, unread),
// Secret "sec" and a Deployment "app" that reads cfg's key a through env,
// cfg's key b through a volume's items, all of sec, and the optional
// ConfigMap "opt", which does not exist yet.
type fixture struct {
	ns  string
	cm  *corev1.ConfigMap
	sec *corev1.Secret
	app *appsv1.Deployment
}

func readerSpec() corev1.PodSpec {
	return corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: "app", Image: "registry.k8s.io/pause:3.10",
			Env: []corev1.EnvVar{{Name: "A", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
				LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Key: "a"}}}},
			EnvFrom: []corev1.EnvFromSource{
				{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "sec"}}},
				{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "opt"}, Optional: ptr.To(true)}},
			},
			VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}},
		}},
		Volumes: []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"},
			Items:                []corev1.KeyToPath{{Key: "b", Path: "b"}},
		}}}},
	}
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{ns: env.NewNamespace(t, true)}
	f.cm = configMap(f.ns, "cfg", map[string]string{"a": "1", "b": "1", "unread": "1"})
	f.sec = secret(f.ns, "sec", map[string]string{"password": "hunter2"})
	env.Create(t, f.cm)
	env.Create(t, f.sec)
	f.app = deploymentOf(f.ns, "app", readerSpec())
	env.Create(t, f.app)
	if got, want := env.StampOf(t, f.app), expectedChecksum(t, f.ns, &f.app.Spec.Template.Spec, nil); got != want {
		t.Fatalf("fixture deployment stamp = %q, want %q", got, want)
	}
	expectReplicaSets(t, f.ns, "app", 1)
	return f
}

// setCM sets key a, the one the fixture's workload reads.
func (f *fixture) setCM(t *testing.T, value string) {
	t.Helper()
	env.Update(t, f.cm, func() { f.cm.Data["a"] = value })
}

func (f *fixture) setSecret(t *testing.T, value string) {
	t.Helper()
	env.Update(t, f.sec, func() { f.sec.Data["password"] = []byte(value) })
}

func TestHookConfigMapChangeRollsReadersOnce(t *testing.T) {
	f := newFixture(t)
	other := deploymentOf(f.ns, "other", readerSpec())
	other.Spec.Selector.MatchLabels = map[string]string{"app": "other"}
	other.Spec.Template.Labels = map[string]string{"app": "other"}
	env.Create(t, other)
	expectReplicaSets(t, f.ns, "other", 1)

	f.setCM(t, "2")
	expectReplicaSets(t, f.ns, "app", 2)
	expectReplicaSets(t, f.ns, "other", 2)
	if want := expectedChecksum(t, f.ns, &f.app.Spec.Template.Spec, nil); env.StampOf(t, f.app) != want {
		t.Errorf("stamp does not match the new content")
	}
	evs := events(t, f.ns, "app", contract.ReasonConfigChanged)
	if len(evs) != 1 || !strings.Contains(evs[0].Message, "configmap/cfg") {
		t.Errorf("want one ConfigChanged event naming configmap/cfg, got %+v", evs)
	}
	for _, e := range evs {
		if strings.Contains(e.Message, "2") && strings.Contains(e.Message, "a=") {
			t.Errorf("event leaks a value: %q", e.Message)
		}
	}
}

func TestHookSecretChangeRollsOnce(t *testing.T) {
	f := newFixture(t)
	f.setSecret(t, "correct-horse")
	expectReplicaSets(t, f.ns, "app", 2)
	for _, e := range events(t, f.ns, "app", contract.ReasonConfigChanged) {
		if strings.Contains(e.Message, "correct-horse") {
			t.Errorf("event leaks the secret: %q", e.Message)
		}
	}
}

func TestHookCoalescesChangesWithinWindow(t *testing.T) {
	f := newFixture(t)
	f.setCM(t, "2")
	f.setSecret(t, "changed")
	expectReplicaSets(t, f.ns, "app", 2)
}

func TestHookIgnoresUnreadKeysAndMetadata(t *testing.T) {
	f := newFixture(t)
	tests := map[string]struct {
		obj    client.Object
		mutate func()
	}{
		"unread key":                   {f.cm, func() { f.cm.Data["unread"] = "2" }},
		"new unread key":               {f.cm, func() { f.cm.Data["extra"] = "x" }},
		"key outside the volume items": {f.cm, func() { f.cm.Data["c"] = "not in items" }},
		"configmap labels":             {f.cm, func() { f.cm.Labels = map[string]string{"team": "x"} }},
		"configmap annotations":        {f.cm, func() { f.cm.Annotations = map[string]string{"note": "x"} }},
		"secret labels":                {f.sec, func() { f.sec.Labels = map[string]string{"team": "x"} }},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			env.Update(t, tc.obj, tc.mutate)
			expectReplicaSets(t, f.ns, "app", 1)
		})
	}
}

func TestHookRevertReturnsToOldReplicaSet(t *testing.T) {
	f := newFixture(t)
	first := env.CurrentReplicaSet(t, f.ns, "app")
	f.setCM(t, "2")
	expectReplicaSets(t, f.ns, "app", 2)
	f.setCM(t, "1")
	expectReplicaSets(t, f.ns, "app", 2)
	if got := env.CurrentReplicaSet(t, f.ns, "app"); got != first {
		t.Errorf("after revert the deployment runs %s, want the original %s", got, first)
	}
}

// TestRolloutUndoOfAConfigRollRollsNothing: after a config change rolled the
// Deployment, `kubectl rollout undo` asks for the previous template, which
// differs only in the stamp. Its pods would read the same (current) content,
// so nothing rolls, the stamp keeps saying what the pods read, and kubectl
// shows the webhook's warning saying so. Reverting the config is what goes
// back to the old ReplicaSet (TestHookRevertReturnsToOldReplicaSet).
func TestRolloutUndoOfAConfigRollRollsNothing(t *testing.T) {
	f := newFixture(t)
	f.setCM(t, "2")
	expectReplicaSets(t, f.ns, "app", 2)
	current := env.CurrentReplicaSet(t, f.ns, "app")
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "app"}}
	stamp := env.StampOf(t, d)

	_, warnings := env.Kubectl(t, "", "rollout", "undo", "deployment/app", "-n", f.ns)
	if !strings.Contains(warnings, "this write rolls nothing") {
		t.Errorf("kubectl did not show the webhook's warning:\n%s", warnings)
	}
	expectReplicaSets(t, f.ns, "app", 2)
	if got := env.CurrentReplicaSet(t, f.ns, "app"); got != current {
		t.Errorf("after rollout undo the deployment runs %s, want %s", got, current)
	}
	if got := env.StampOf(t, d); got != stamp {
		t.Errorf("stamp changed from %s to %s", stamp, got)
	}
}

func TestHookRestartIsNoOpAndCatchesUp(t *testing.T) {
	f := newFixture(t)
	t.Run("restart with nothing changed", func(t *testing.T) {
		restartConfighash(t)
		expectReplicaSets(t, f.ns, "app", 1)
	})
	t.Run("change while down is caught up once", func(t *testing.T) {
		stopConfighash(t)
		f.setCM(t, "while-down")
		expectReplicaSets(t, f.ns, "app", 1)
		startConfighash(t)
		expectReplicaSets(t, f.ns, "app", 2)
	})
}

func TestHookMissingRequiredSource(t *testing.T) {
	f := newFixture(t)
	remove(t, f.sec)
	expectReplicaSets(t, f.ns, "app", 1)
	if evs := events(t, f.ns, "app", contract.ReasonSourceMissing); len(evs) == 0 || evs[0].Type != corev1.EventTypeWarning {
		t.Errorf("want a SourceMissing warning, got %+v", evs)
	}
	t.Run("recreated with the old content", func(t *testing.T) {
		env.Create(t, secret(f.ns, "sec", map[string]string{"password": "hunter2"}))
		expectReplicaSets(t, f.ns, "app", 1)
	})
	t.Run("deleted and recreated with new content", func(t *testing.T) {
		remove(t, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "sec"}})
		expectReplicaSets(t, f.ns, "app", 1)
		env.Create(t, secret(f.ns, "sec", map[string]string{"password": "new"}))
		expectReplicaSets(t, f.ns, "app", 2)
	})
}

func TestHookOptionalSourceAppearsAndDisappears(t *testing.T) {
	f := newFixture(t)
	opt := configMap(f.ns, "opt", map[string]string{"x": "1"})
	env.Create(t, opt)
	expectRevision(t, f.ns, "app", 2)
	// Disappearing brings back the content of revision 1, so the rollout
	// returns to the first ReplicaSet rather than creating a third.
	remove(t, opt)
	expectRevision(t, f.ns, "app", 3)
	expectReplicaSets(t, f.ns, "app", 2)
}

func TestHookWorksWhileWebhookUnreachable(t *testing.T) {
	f := newFixture(t)
	webhookUnreachable(t, f.ns)

	f.setCM(t, "2")
	expectReplicaSets(t, f.ns, "app", 2)
}

func TestHookLeavesPreexistingWorkloadsUntilTheirConfigChanges(t *testing.T) {
	ns := env.NewNamespace(t, false)
	env.Create(t, configMap(ns, "cfg", map[string]string{"a": "1", "b": "1"}))
	env.Create(t, secret(ns, "sec", map[string]string{"password": "x"}))
	d := deploymentOf(ns, "app", readerSpec())
	env.Create(t, d)
	expectReplicaSets(t, ns, "app", 1)

	nsObj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
	env.Update(t, nsObj, func() { nsObj.Labels = map[string]string{contract.InjectionLabel: contract.InjectionEnabled} })
	restartConfighash(t)
	expectReplicaSets(t, ns, "app", 1)
	if got := env.StampOf(t, d); got != "" {
		t.Fatalf("pre-existing workload stamped without a change: %q", got)
	}

	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg"}}
	env.Update(t, cm, func() { cm.Data["a"] = "2" })
	expectReplicaSets(t, ns, "app", 2)
	if env.StampOf(t, d) == "" {
		t.Error("config change did not stamp the workload")
	}
}

func TestHookRollsStatefulSetsDaemonSetsAndCronJobs(t *testing.T) {
	f := newFixture(t)
	spec := readerSpec()
	jobSpec := *spec.DeepCopy()
	jobSpec.RestartPolicy = corev1.RestartPolicyNever
	sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "e2e"}}
	objs := []client.Object{
		&appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "sts"},
			Spec: appsv1.StatefulSetSpec{Selector: sel, Template: template(spec)}},
		&appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "ds"},
			Spec: appsv1.DaemonSetSpec{Selector: sel, Template: template(spec)}},
		&batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "cj"},
			Spec: batchv1.CronJobSpec{Schedule: "0 0 1 1 *", JobTemplate: batchv1.JobTemplateSpec{
				Spec: batchv1.JobSpec{Template: template(jobSpec)}}}},
	}
	before := map[string]string{}
	for _, o := range objs {
		env.Create(t, o)
		before[o.GetName()] = env.StampOf(t, o)
	}
	waitRevisions(t, f.ns, 2) // one ControllerRevision each for sts and ds

	f.setCM(t, "2")
	time.Sleep(settle)
	for _, o := range objs {
		if env.StampOf(t, o) == before[o.GetName()] {
			t.Errorf("%s was not re-stamped", o.GetName())
		}
	}
	// A real rollout of each: a second ControllerRevision, and no third.
	waitRevisions(t, f.ns, 4)
}

func waitRevisions(t *testing.T, ns string, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(env.SpecContext(t), 30*time.Second)
	defer cancel()
	for {
		l := &appsv1.ControllerRevisionList{}
		if err := env.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
			t.Fatal(err)
		}
		if len(l.Items) == n {
			time.Sleep(settle)
			if err := env.Client.List(ctx, l, client.InNamespace(ns)); err != nil {
				t.Fatal(err)
			}
			if len(l.Items) != n {
				t.Fatalf("controllerrevisions = %d, want %d", len(l.Items), n)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("controllerrevisions = %d, want %d", len(l.Items), n)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func TestHookFlapHold(t *testing.T) {
	stopConfighash(t)
	if err := env.Confighash.Start(env.SpecContext(t), "--flap-limit=2", "--flap-window=1m"); err != nil {
		t.Skipf("cannot pass flags to this confighash: %v", err)
	}
	t.Cleanup(func() { _ = env.Confighash.Stop(context.Background()) })
	f := newFixture(t)
	f.setCM(t, "2")
	expectRevision(t, f.ns, "app", 2)
	f.setCM(t, "3")
	expectRevision(t, f.ns, "app", 3)
	f.setCM(t, "4")
	expectRevision(t, f.ns, "app", 3) // held: no third rollout within the window
	evs := events(t, f.ns, "app", contract.ReasonFlapHold)
	if len(evs) == 0 || evs[0].Type != corev1.EventTypeWarning {
		t.Fatalf("want a FlapHold warning, got %+v", evs)
	}
}

// A workload admitted a moment before its config changes may not be in the
// hook's index yet when the change arrives. It must still end on the new
// content (the hook re-checks workloads shortly after they are written).
func TestHookWorkloadsCreatedDuringAChange(t *testing.T) {
	ns := env.NewNamespace(t, true)
	cm := configMap(ns, "shared", map[string]string{"k": "1"})
	env.Create(t, cm)
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10",
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "shared"}}}}}}}
	var wg sync.WaitGroup
	var ds []*appsv1.Deployment
	for i := range 50 {
		d := deploymentOf(ns, fmt.Sprintf("r-%d", i), spec)
		d.Spec.Replicas = ptr.To[int32](0)
		ds = append(ds, d)
		wg.Go(func() { env.Create(t, d) })
	}
	wg.Wait()
	env.Update(t, cm, func() { cm.Data["k"] = "2" })
	framework.WaitAllStamped(t, env, ds, expectedChecksum(t, ns, &spec, nil), 500*time.Millisecond, 30*time.Second)
}
