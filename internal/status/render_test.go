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
	"github.com/confighash/confighash/internal/window"
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
	want := strings.Join([]string{
		"WORKLOAD         INJECTION   STATE          SOURCES   CONFIG CHANGED   REASON",
		"deployment/web   on          stale          2/3       5m ago           the stamp differs from what the sources give now",
		"cronjob/report   off         not-injected   0/0       <none>           opted out by annotation confighash.dev/injection=disabled",
		"",
	}, "\n")
	if got := table(t, sampleReport(), TableOptions{Now: renderNow}); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestWriteTableAllNamespacesAndDetails(t *testing.T) {
	r := sampleReport()
	r.Workloads = r.Workloads[:1]
	got := table(t, r, TableOptions{AllNamespaces: true, Details: true, Now: renderNow})
	wantLines(t, got,
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
	)
}

// table is r as WriteTable writes it with o.
func table(t *testing.T, r *Report, o TableOptions) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteTable(&b, r, o); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// wantLines checks that got holds each of wants.
func wantLines(t *testing.T, got string, wants ...string) {
	t.Helper()
	for _, want := range wants {
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
		"stampedChecksum", "expectedChecksum", "sources", "lastConfigChanged", "lastFlapHold", "lastSourceMissing", "hold", "warnings",
		"halt", "rollout")
	expectKeys(t, "injection", w["injection"].(map[string]any), "state", "reason")
	expectKeys(t, "source", w["sources"].([]any)[0].(map[string]any), "kind", "name", "keys", "optional", "presence")
	expectKeys(t, "event", w["lastConfigChanged"].(map[string]any), "type", "reason", "time", "count", "message")
	for _, null := range []string{"lastFlapHold", "halt", "rollout"} {
		if w[null] != nil {
			t.Errorf("%s = %v, want null", null, w[null])
		}
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

// haltReport has a halted workload, a reader waiting for it and one
// whose halt was released.
func haltReport() *Report {
	since := renderNow.Add(-2 * time.Minute)
	changes := []string{"configmap/shared@0123456789abcdef"}
	canary := Workload{Kind: "Deployment", Namespace: "shop", Name: "canary", Injection: Injection{InjectionOn, "labelled"},
		StampedChecksum: "v2:k:aa", ExpectedChecksum: "v2:k:aa", Sources: []Source{{Kind: "ConfigMap", Name: "shared", Keys: []string{AllKeys}, Presence: Present}},
		Halt:    &Halt{Since: since, Changes: changes, Reason: "CrashLoopBackOff", Sealed: true},
		Rollout: &Rollout{Since: since.Add(-time.Minute), Changes: changes}}
	web := canary
	web.Name, web.StampedChecksum, web.Halt, web.Rollout = "web", "v2:k:00", nil, nil
	web.HaltedChanges = []HaltedChange{{Source: "configmap/shared", Workload: "deployment/canary", Reason: "CrashLoopBackOff", Since: since}}
	freed := canary
	freed.Name, freed.Halt = "freed", &Halt{Released: true}
	r := &Report{SchemaVersion: SchemaVersion, Workloads: []Workload{canary, web, freed}, Summary: map[State]int{}}
	for i := range r.Workloads {
		w := &r.Workloads[i]
		w.State, w.Reason = Classify(w, time.Time{}, window.Cluster{})
		r.Summary[w.State]++
	}
	return r
}

func TestWriteTableHalts(t *testing.T) {
	got := table(t, haltReport(), TableOptions{Details: true, Now: renderNow})
	wantLines(t, got,
		"deployment/canary   on          halted    1/1       <none>           its rollout for configmap/shared failed (CrashLoopBackOff since 2026-01-02T03:02:05Z) and holds back the change from the source's other readers",
		"deployment/web      on          waiting   1/1       <none>           waiting: change of configmap/shared halted at deployment/canary (CrashLoopBackOff); ",
		"deployment/freed    on          current   1/1       <none>           the stamp is what the sources give now; its halt (confighash.dev/halt) was released by hand",
		"  Halt:                 since 2026-01-02T03:02:05Z, CrashLoopBackOff, for configmap/shared (sealed, unverified)\n",
		"  Last re-stamp:        2026-01-02T03:01:05Z (3m ago) for configmap/shared\n",
		"  Halted change:        configmap/shared at deployment/canary (CrashLoopBackOff since 2026-01-02T03:02:05Z)\n",
		"  Halt:                 released by hand: it holds back no change\n",
		"  Last re-stamp:        <none>\n",
	)
}

func TestWriteJSONHalts(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, haltReport()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Workloads []map[string]any `json:"workloads"`
		Summary   map[string]any   `json:"summary"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, b.String())
	}
	canary, web, freed := doc.Workloads[0], doc.Workloads[1], doc.Workloads[2]
	if canary["state"] != "halted" || web["state"] != "waiting" || freed["state"] != "current" {
		t.Errorf("states = %v, %v, %v", canary["state"], web["state"], freed["state"])
	}
	halt := canary["halt"].(map[string]any)
	expectKeys(t, "halt", halt, "since", "changes", "reason", "sealed")
	if halt["since"] != "2026-01-02T03:02:05Z" || halt["reason"] != "CrashLoopBackOff" ||
		!slices.Equal(toStrings(halt["changes"]), []string{"configmap/shared@0123456789abcdef"}) {
		t.Errorf("halt = %v", halt)
	}
	expectKeys(t, "rollout", canary["rollout"].(map[string]any), "since", "changes")
	if _, ok := canary["haltedChanges"]; ok {
		t.Errorf("canary has haltedChanges %v, want them omitted", canary["haltedChanges"])
	}
	hcs := web["haltedChanges"].([]any)
	if len(hcs) != 1 {
		t.Fatalf("haltedChanges = %v", hcs)
	}
	hc := hcs[0].(map[string]any)
	expectKeys(t, "haltedChange", hc, "source", "workload", "reason", "since")
	if hc["source"] != "configmap/shared" || hc["workload"] != "deployment/canary" || hc["reason"] != "CrashLoopBackOff" {
		t.Errorf("haltedChange = %v", hc)
	}
	expectKeys(t, "released halt", freed["halt"].(map[string]any), "released")
	expectKeys(t, "summary", doc.Summary, "halted", "waiting", "current")

	var back Report // what e2e and scripts do with the output
	if err := json.Unmarshal(b.Bytes(), &back); err != nil || !back.Workloads[2].Halt.Released || back.Workloads[0].Halt.InForce() != true {
		t.Errorf("round trip: %v, %+v", err, back.Workloads)
	}
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
