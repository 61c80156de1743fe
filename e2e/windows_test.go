//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/internal/contract"
)

// TestWindowHoldsChangesUntilItOpens: in a namespace whose rollout window
// opens at the next minute (at least 40 s away), three changes to a
// reader's ConfigMap and a restart of confighash roll nothing; when the
// window opens the reader is re-stamped once, to the newest content, and
// it was told why it waited.
func TestWindowHoldsChangesUntilItOpens(t *testing.T) {
	ns := env.NewNamespace(t, true)
	schedule, opens := windowOpeningSoon(40 * time.Second)
	annotateNamespace(t, ns, contract.WindowAnnotation, schedule)
	cm := configMap(ns, "app", map[string]string{"k": "v1"})
	env.Create(t, cm)
	env.Create(t, secret(ns, "db", map[string]string{"password": "p"}))
	web := windowReader(ns, "web", "app")
	env.Create(t, web)
	first := env.StampOf(t, web)
	if want := expectedChecksum(t, ns, &web.Spec.Template.Spec, nil); first != want {
		t.Fatalf("created with stamp %s, want %s: the webhook stamps at once, window or not", first, want)
	}

	for _, v := range []string{"v2", "v3", "v4"} {
		env.Update(t, cm, func() { cm.Data["k"] = v })
		time.Sleep(time.Second)
	}
	// A new leader decides from the objects alone, as the old one did.
	restartConfighash(t)
	stampStays(t, web, first, time.Until(opens)-2*time.Second)
	want := expectedChecksum(t, ns, &web.Spec.Template.Spec, nil)
	waitStamp(t, web, want, time.Until(opens)+30*time.Second)
	t.Logf("re-stamped %s after the window %q opened at %s", time.Since(opens).Round(100*time.Millisecond), schedule, opens.Format(time.TimeOnly))
	expectRevision(t, ns, web.Name, 2)
	waits := events(t, ns, web.Name, contract.ReasonWaitingForWindow)
	if len(waits) == 0 || !strings.Contains(waits[0].Message, schedule) {
		t.Errorf("WaitingForWindow events %v, want one naming %q", waits, schedule)
	}
}

// TestFreezeHoldsEveryReaderAndUrgentLetsOneThrough: a namespace frozen
// from yesterday to tomorrow holds both readers' changes; marking one
// source urgent lets its reader go at once, with an Event naming who
// marked it, and only that one.
func TestFreezeHoldsEveryReaderAndUrgentLetsOneThrough(t *testing.T) {
	ns := env.NewNamespace(t, true)
	now := time.Now().UTC()
	freeze := fmt.Sprintf("%s/%s UTC", now.AddDate(0, 0, -1).Format(time.DateOnly), now.AddDate(0, 0, 1).Format(time.DateOnly))
	annotateNamespace(t, ns, contract.FreezeAnnotation, freeze)
	ui, tls := configMap(ns, "ui", map[string]string{"k": "v1"}), configMap(ns, "tls", map[string]string{"k": "v1"})
	env.Create(t, ui)
	env.Create(t, tls)
	env.Create(t, secret(ns, "db", map[string]string{"password": "p"}))
	front, edge := windowReader(ns, "front", "ui"), windowReader(ns, "edge", "tls")
	env.Create(t, front)
	env.Create(t, edge)
	frontStamp, edgeStamp := env.StampOf(t, front), env.StampOf(t, edge)

	env.Update(t, ui, func() { ui.Data["k"] = "v2" })
	env.Update(t, tls, func() { tls.Data["k"] = "v2" })
	stampStays(t, front, frontStamp, settle)
	stampStays(t, edge, edgeStamp, time.Second)
	for _, d := range []*appsv1.Deployment{front, edge} {
		if got := events(t, ns, d.Name, contract.ReasonWaitingForWindow); len(got) == 0 || !strings.Contains(got[0].Message, "frozen") {
			t.Errorf("%s: WaitingForWindow events %v, want one saying it is frozen", d.Name, got)
		}
	}

	env.Update(t, tls, func() { tls.Annotations = map[string]string{contract.UrgentAnnotation: "INC-4711 e2e"} })
	waitStamp(t, edge, expectedChecksum(t, ns, &edge.Spec.Template.Spec, nil), 30*time.Second)
	stampStays(t, front, frontStamp, settle)
	urgent := events(t, ns, edge.Name, contract.ReasonUrgentChange)
	if len(urgent) != 1 || !strings.Contains(urgent[0].Message, "configmap/tls") || !strings.Contains(urgent[0].Message, "INC-4711 e2e") ||
		strings.Contains(urgent[0].Message, "does not name") {
		t.Errorf("UrgentChange events %v, want one naming configmap/tls, its note and who set it", urgent)
	}
}

// windowOpeningSoon is a window of every day, in UTC, that opens at the
// first whole minute at least lead from now and lasts two minutes, and the
// instant it opens.
func windowOpeningSoon(lead time.Duration) (string, time.Time) {
	opens := time.Now().UTC().Add(lead).Truncate(time.Minute).Add(time.Minute)
	return fmt.Sprintf("* %s-%s UTC", opens.Format("15:04"), opens.Add(2*time.Minute).Format("15:04")), opens
}

func annotateNamespace(t *testing.T, name, key, value string) {
	t.Helper()
	ns := &corev1.Namespace{}
	ns.Name = name
	env.Update(t, ns, func() {
		if ns.Annotations == nil {
			ns.Annotations = map[string]string{}
		}
		ns.Annotations[key] = value
	})
}

// windowReader is a Deployment reading configmap cm and secret db, with a
// selector of its own.
func windowReader(ns, name, cm string) *appsv1.Deployment {
	d := deploymentOf(ns, name, podSpec(cm, "db"))
	d.Spec.Selector.MatchLabels = map[string]string{"app": name}
	d.Spec.Template.Labels = map[string]string{"app": name}
	return d
}
