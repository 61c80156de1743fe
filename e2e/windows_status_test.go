//go:build e2e

package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/confighash/confighash/internal/serversettings"
	"github.com/confighash/confighash/internal/status"
)

// TestStatusAndPreviewShowTheWindow: confighash started with a
// --rollout-window that is closed today (open only three days from now,
// in UTC) keeps a changed ConfigMap's reader stale. status, told no
// window, reads the published one and reports the reader waiting for it,
// with when it may start; preview says its next change waits for it too,
// and that one marked confighash.dev/urgent goes now.
func TestStatusAndPreviewShowTheWindow(t *testing.T) {
	opens := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 3)
	win := opens.Weekday().String()[:3] + " 00:00-24:00 UTC"
	restartWith(t, "--rollout-window="+win)
	waitPublished(t, serversettings.KeyRolloutWindow, win)

	ns := env.NewNamespace(t, true)
	cm := settingsConfig(t, ns)
	spec := envFromSettings()
	d := deploymentOf(ns, "web", spec)
	stamp := createStamped(t, d, spec)
	env.Update(t, cm, func() { cm.Data["mode"] = "two" })
	// The hook sees the change and waits: give it the time it would take
	// to re-stamp, then check it did not.
	time.Sleep(3 * time.Second)
	if got := env.StampOf(t, d); got != stamp {
		t.Fatalf("re-stamped to %q outside the window", got)
	}

	w := statusOf(t, ns, "deployment/web", 1)
	wantWhy := `waiting for window "` + win + `" (--rollout-window) — may start at ` + opens.Format(time.RFC3339)
	if w.State != status.StateWaiting || !strings.HasPrefix(w.Reason, wantWhy) {
		t.Errorf("status: %s: %s; want waiting, saying %q", w.State, w.Reason, wantWhy)
	}
	if w.Window == nil || !w.Window.Until.Equal(opens) {
		t.Errorf("status: window %+v, want until %s", w.Window, opens)
	}

	next := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: " + ns + "}\ndata: {mode: three}\n"
	rep, stderr := runPreview(t, next)
	wantWhen := `waits for window "` + win + `" (--rollout-window) — at ` + opens.Format(time.RFC3339)
	if len(rep.Rolling) != 1 || rep.Rolling[0].When != wantWhen || !rep.Rolling[0].Later || stderr != "" {
		t.Errorf("preview: rolling %+v, stderr %q; want web, saying %q, and no note", rep.Rolling, stderr, wantWhen)
	}
	urgent := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: " + ns +
		", annotations: {confighash.dev/urgent: INC-1}}\ndata: {mode: three}\n"
	rep, _ = runPreview(t, urgent)
	if len(rep.Rolling) != 1 || !strings.HasPrefix(rep.Rolling[0].When, "urgent: goes now") || rep.Rolling[0].Later {
		t.Errorf("preview of the urgent change: rolling %+v, want web going now", rep.Rolling)
	}
}
