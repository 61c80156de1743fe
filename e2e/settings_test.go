//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/confighash/confighash/cmd/confighash/app"
	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/internal/preview"
	"github.com/confighash/confighash/internal/serversettings"
	"github.com/confighash/confighash/internal/status"
)

// TestStatusAndPreviewReadTheServersSettings: confighash started with
// --max-wave-size=3 and a custom kind (--workload-kind); status and
// preview, told neither, answer as that confighash does: preview lists the
// custom kind's reader and cuts the waves at 3, status finds the custom
// kind's workload and reports it current. A flag given that disagrees wins,
// with one line saying so.
func TestStatusAndPreviewReadTheServersSettings(t *testing.T) {
	installWidgetCRD(t)
	restartWith(t, widgetKindFlag("spec.template"), "--max-wave-size=3")
	waitPublished(t, serversettings.KeyMaxWaveSize, "3")

	ns := env.NewNamespace(t, true)
	settingsConfig(t, ns)
	spec := envFromSettings()
	env.Create(t, widget(ns, "gadget", spec))
	// Eight readers in waves: 1, 2, 3, 2 with waves of at most 3; 1, 2, 4,
	// 1 with the default 16.
	for i := range 7 {
		env.Create(t, deploymentOf(ns, fmt.Sprintf("web-%d", i), spec))
	}
	changed := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: " + ns + "}\ndata: {mode: two}\n"

	rep, stderr := runPreview(t, changed)
	if rep.MaxWaveSize != 3 {
		t.Errorf("preview cut waves of at most %d, want 3 (the server's --max-wave-size)", rep.MaxWaveSize)
	}
	sizes := map[int]int{}
	widgetRolls := false
	for _, r := range rep.Rolling {
		sizes[r.Wave]++
		widgetRolls = widgetRolls || r.Name == "gadget"
	}
	if !widgetRolls {
		t.Errorf("preview does not list the Widget gadget as rolling: %+v", rep.Rolling)
	}
	if got := []int{sizes[1], sizes[2], sizes[3], sizes[4]}; fmt.Sprint(got) != "[1 2 3 2]" || sizes[0] != 0 {
		t.Errorf("wave sizes %v (at once: %d), want [1 2 3 2]", got, sizes[0])
	}
	if stderr != "" {
		t.Errorf("preview said %q, want nothing: no flag was given", stderr)
	}

	r := runStatus(t, "widget/gadget", "-n", ns, "-o", "json")
	if r.err != nil {
		t.Fatalf("status of the Widget, without --workload-kind: %v", r.err)
	}
	var srep status.Report
	if err := json.Unmarshal([]byte(r.stdout), &srep); err != nil {
		t.Fatalf("decoding status: %v", err)
	}
	if len(srep.Workloads) != 1 || srep.Workloads[0].State != status.StateCurrent {
		t.Errorf("status of widget/gadget: %+v, want it current", srep.Workloads)
	}

	// An override: the flag wins, and one line says what it overrides.
	rep, stderr = runPreview(t, changed, "--max-wave-size=16")
	if rep.MaxWaveSize != 16 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "--max-wave-size=16 overrides 3") {
		t.Errorf("with --max-wave-size=16: waves of %d, stderr %q; want 16 and one line naming the override", rep.MaxWaveSize, stderr)
	}
}

// runPreview runs `confighash preview -f - -o json` on text, with only
// how to reach the cluster and args, and returns the report and stderr.
func runPreview(t *testing.T, text string, args ...string) (preview.Report, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	full := append([]string{"-f", "-", "-o", "json", "--kubeconfig", env.Kubeconfig, "--namespace-of-confighash", framework.Namespace}, args...)
	err := app.Preview(env.SpecContext(t), full, strings.NewReader(text), &stdout, &stderr)
	t.Logf("confighash preview %s: %v\n%s%s", strings.Join(full, " "), err, stdout.String(), stderr.String())
	if err != nil {
		t.Fatalf("preview: %v", err)
	}
	var rep preview.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("decoding the json: %v", err)
	}
	return rep, stderr.String()
}

// waitPublished waits until the running confighash has published value
// under key: the ConfigMap a confighash started earlier wrote is replaced
// by the leader's first apply.
func waitPublished(t *testing.T, key serversettings.Key, value string) {
	t.Helper()
	ref := types.NamespacedName{Namespace: framework.Namespace, Name: serversettings.ConfigMapName}
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		cm := &corev1.ConfigMap{}
		if err := env.Client.Get(ctx, ref, cm); err != nil {
			return false, nil //nolint:nilerr // not published yet
		}
		return cm.Data[string(key)] == value, nil
	})
	if err != nil {
		t.Fatalf("%s: %s=%s not published: %v", ref, key, value, err)
	}
}
