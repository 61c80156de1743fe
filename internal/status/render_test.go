package status

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/internal/contract"
)

var renderNow = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func sampleReport() *Report {
	return &Report{
		SchemaVersion: SchemaVersion,
		Workloads: []Workload{
			{
				Kind: "Deployment", Namespace: "shop", Name: "web",
				Injection: Injection{InjectionOn, "namespace shop is labelled confighash.dev/injection=enabled"},
				State:     StateStale, Reason: "the stamp differs\nfrom what the sources give now",
				StampedChecksum: "v1:00", ExpectedChecksum: "v1:aa",
				Sources: []Source{
					{Kind: "ConfigMap", Name: "web", Keys: []string{AllKeys}, Presence: Present},
					{Kind: "Secret", Name: "db", Keys: []string{"password", "user"}, Presence: Present},
					{Kind: "ConfigMap", Name: "flags", Keys: []string{AllKeys}, Optional: true, Presence: Absent},
				},
				LastConfigChanged: &Event{Type: corev1.EventTypeNormal, Reason: contract.ReasonConfigChanged, Time: renderNow.Add(-5 * time.Minute),
					Count: 1, Message: "config changed (configmap/web); re-stamped pod template"},
				Warnings: []string{"confighash: annotation confighash.dev/include: ignoring entry: invalid source \"x\""},
			},
			{
				Kind: "CronJob", Namespace: "shop", Name: "report",
				Injection: Injection{InjectionOff, "opted out by annotation confighash.dev/injection=disabled"},
				State:     StateNotInjected, Reason: "opted out by annotation confighash.dev/injection=disabled",
				Sources: []Source{},
			},
		},
		Summary: map[State]int{StateStale: 1, StateNotInjected: 1},
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, sampleReport(), TableOptions{Now: renderNow}); err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"WORKLOAD         INJECTION   STATE          SOURCES   CONFIG CHANGED   REASON",
		"deployment/web   on          stale          2/3       5m ago           the stamp differs from what the sources give now",
		"cronjob/report   off         not-injected   0/0       <none>           opted out by annotation confighash.dev/injection=disabled",
		"",
	}, "\n")
	if got := b.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteTableAllNamespacesAndDetails(t *testing.T) {
	r := sampleReport()
	r.Workloads = r.Workloads[:1]
	var b bytes.Buffer
	if err := WriteTable(&b, r, TableOptions{AllNamespaces: true, Details: true, Now: renderNow}); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"NAMESPACE   WORKLOAD",
		"shop        deployment/web",
		"deployment/web in namespace shop\n",
		"  Stamped checksum:     v1:00\n",
		"  Expected checksum:    v1:aa\n",
		"  Last ConfigChanged:   2026-01-02T02:59:05Z (5m ago) Normal: config changed (configmap/web); re-stamped pod template\n",
		"  Last FlapHold:        <none>\n",
		"  Flap hold:            <none>\n",
		"  Warning:              confighash: annotation",
		"  SOURCE            KEYS            OPTIONAL   PRESENCE\n",
		"  configmap/web     *               no         present\n",
		"  secret/db         password,user   no         present\n",
		"  configmap/flags   *               yes        absent\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// TestWriteJSONSchema pins the JSON layout: the exact set of fields at
// each level. status never reads a value, so the thing to guard is that no
// field that could carry one (data, stringData, value, …) ever appears.
func TestWriteJSONSchema(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, b.String())
	}
	expectKeys(t, "report", doc, "schemaVersion", "workloads", "summary")
	if doc["schemaVersion"] != "status.confighash.dev/v1" {
		t.Errorf("schemaVersion = %v", doc["schemaVersion"])
	}
	ws := doc["workloads"].([]any)
	w := ws[0].(map[string]any)
	expectKeys(t, "workload", w, "kind", "namespace", "name", "injection", "state", "reason",
		"stampedChecksum", "expectedChecksum", "sources", "lastConfigChanged", "lastFlapHold", "lastSourceMissing", "hold", "warnings")
	expectKeys(t, "injection", w["injection"].(map[string]any), "state", "reason")
	expectKeys(t, "source", w["sources"].([]any)[0].(map[string]any), "kind", "name", "keys", "optional", "presence")
	expectKeys(t, "event", w["lastConfigChanged"].(map[string]any), "type", "reason", "time", "count", "message")
	if w["lastFlapHold"] != nil {
		t.Errorf("lastFlapHold = %v, want null", w["lastFlapHold"])
	}
	if got := w["sources"].([]any)[1].(map[string]any)["keys"]; !slices.Equal(toStrings(got), []string{"password", "user"}) {
		t.Errorf("keys = %v", got)
	}
	// No sources is [], not null, so consumers need not special-case it.
	if s, ok := ws[1].(map[string]any)["sources"].([]any); !ok || len(s) != 0 {
		t.Errorf("sources of a workload reading nothing = %#v, want []", ws[1].(map[string]any)["sources"])
	}
	expectKeys(t, "summary", doc["summary"].(map[string]any), "stale", "not-injected")
}

func TestWriteInstallTable(t *testing.T) {
	r := &InstallReport{Checks: []Check{
		{Name: CheckCABundle, OK: true, Detail: "1 PEM certificate(s)"},
		{Name: CheckFailurePolicy, Detail: "Fail: blocks\nwrites"},
	}}
	var b bytes.Buffer
	if err := WriteInstallTable(&b, r); err != nil {
		t.Fatal(err)
	}
	want := "ok     ca-bundle        1 PEM certificate(s)\nFAIL   failure-policy   Fail: blocks writes\n"
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

func expectKeys(t *testing.T, what string, m map[string]any, keys ...string) {
	t.Helper()
	var got []string
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	slices.Sort(keys)
	if !slices.Equal(got, keys) {
		t.Errorf("%s fields = %v, want %v", what, got, keys)
	}
}

func toStrings(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}
