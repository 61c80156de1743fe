package preview

import (
	"bytes"
	"context"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// A reader failing before the change rolls at once, unjudged, and the
// canary is the first reader that is not failing, as the hook has it.
func TestComputeFailingReader(t *testing.T) {
	live := cmState(t, map[string]string{"a": "1"}, nil)
	next := cmState(t, map[string]string{"a": "2"}, nil)
	broken := deployment("a-broken", nil, envKey("a"))
	broken.Status.Conditions = []appsv1.DeploymentCondition{
		{Type: appsv1.DeploymentProgressing, Status: corev1.ConditionFalse, Reason: "ProgressDeadlineExceeded"}}
	broken.Generation, broken.Status.ObservedGeneration, broken.Status.Replicas = 1, 1, 1
	if got := failingBefore(context.Background(), fake.NewClientBuilder().Build(), deploymentKind(t), broken); got != "ProgressDeadlineExceeded" {
		t.Fatalf("failingBefore = %q, want ProgressDeadlineExceeded", got)
	}
	f := facts(t, &live, next, nil, broken, deployment("b-web", nil, envKey("a")), deployment("c-api", nil, envKey("a")))
	f.Readers[0].Failing = "ProgressDeadlineExceeded"
	rep := computed(t, f, 8)
	want := []rolled{
		{"deployment/a-broken", 0, true, "changed: a"},
		{"deployment/b-web", 1, false, "changed: a"},
		{"deployment/c-api", 2, false, "changed: a"},
	}
	expectRolling(t, rep, want)
	var out strings.Builder
	if err := WriteTable(&out, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "at once (failing: ProgressDeadlineExceeded)") {
		t.Errorf("the table does not say a-broken is failing:\n%s", out.String())
	}
}

// The reasons a report carries come from tenants' objects (a halt's reason,
// a rollout record's failing=); the table shows their control characters
// escaped, never raw.
func TestTableEscapesTenantText(t *testing.T) {
	const esc = "\x1b[2K\r\x1b]52;c;eA==\a"
	rep := &Report{Source: "configmap/app", Namespace: "shop", Served: true, ServedReason: "labelled" + esc,
		Rolling:    []Rolling{{Failing: "Crash" + esc, Waits: "halt" + esc}},
		NotRolling: []NotRolling{{Reason: "held" + esc}}}
	var out bytes.Buffer
	if err := WriteTable(&out, rep); err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(out.Bytes(), "\x1b\a\r") {
		t.Errorf("the table carries raw control characters:\n%q", out.String())
	}
}
