//go:build e2e

package e2e

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/status"
)

// TestIgnoredSourceRollsNothing: a Deployment reads ConfigMap cfg and
// ConfigMap clock, which an operator keeps rewriting. Once clock carries
// confighash.dev/ignore, neither its changes, nor adding or removing the
// annotation, nor a restart of confighash in between rolls anything; a
// change to cfg still does, once, and then counts clock's content again.
func TestIgnoredSourceRollsNothing(t *testing.T) {
	ns := env.NewNamespace(t, true)
	cfg := configMap(ns, "cfg", map[string]string{"a": "1"})
	clock := configMap(ns, "clock", map[string]string{"t": "12:00"})
	sec := secret(ns, "sec", map[string]string{"password": "p"})
	env.Create(t, cfg)
	env.Create(t, clock)
	env.Create(t, sec)
	spec := podSpec("cfg", "sec")
	spec.Containers[0].EnvFrom = append(spec.Containers[0].EnvFrom, corev1.EnvFromSource{
		ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "clock"}}})
	d := deploymentOf(ns, "app", spec)
	env.Create(t, d)
	expectReplicaSets(t, ns, "app", 1)
	counted := env.StampOf(t, d) // made while clock still counted

	setIgnore := func(on bool) {
		env.Update(t, clock, func() {
			if on {
				clock.Annotations = map[string]string{contract.IgnoreAnnotation: contract.IgnoreTrue}
			} else {
				delete(clock.Annotations, contract.IgnoreAnnotation)
			}
		})
	}

	setIgnore(true)
	expectReplicaSets(t, ns, "app", 1)
	env.Update(t, clock, func() { clock.Data["t"] = "12:01" })
	expectReplicaSets(t, ns, "app", 1)

	w := statusOf(t, ns, "deployment/app", 0)
	var shown bool
	for _, s := range w.Sources {
		shown = shown || (s.Name == "clock" && s.Ignored)
	}
	if !shown || w.State != status.StateCurrent {
		t.Errorf("status: want configmap/clock shown as ignored and the workload current, got %s %+v", w.State, w.Sources)
	}
	if r := runStatus(t, "deployment/app", "-n", ns); !strings.Contains(r.stdout, "present, ignored") {
		t.Error("status table does not show configmap/clock as ignored")
	}

	// The start-up replay sees a stamp made from clock's old content.
	restartConfighash(t)
	env.Update(t, clock, func() { clock.Data["t"] = "12:02" })
	expectReplicaSets(t, ns, "app", 1)

	setIgnore(false)
	expectReplicaSets(t, ns, "app", 1)
	if got := env.StampOf(t, d); got != counted {
		t.Errorf("the stamp changed while only clock's annotation and content did")
	}

	env.Update(t, cfg, func() { cfg.Data["a"] = "2" })
	expectReplicaSets(t, ns, "app", 2)
	if want := expectedChecksum(t, ns, &d.Spec.Template.Spec, nil); env.StampOf(t, d) != want {
		t.Error("after a change to cfg the stamp is not what cfg and clock (counted again) give")
	}
}
