package status

import (
	"bytes"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/status/statustest"
	"github.com/confighash/confighash/internal/workload"
)

// Whoever can write one workload (or create an Event) in a namespace
// writes the text of a halt's reason, a rollout record's failing= or an
// Event's message, and status shows them on the halting workload's row and
// on every fellow reader's: the table shows their control characters
// escaped, never raw, or a terminal would run them.
func TestTableCarriesNoTerminalEscapes(t *testing.T) {
	const esc = "\x1b[1A\x1b[2K\x1b]52;c;cm0gLXJmIH4=\x07"
	since := time.Now().Add(-time.Minute).UTC().Truncate(time.Second)
	labelled := map[string]string{contract.InjectionLabel: contract.InjectionEnabled}
	halt := sealed(contract.Halt{Since: since, Reason: "Crash" + esc,
		Changes: []contract.Change{{Source: "configmap/cfg", Content: "0123456789abcdef"}}}.String())
	spec := readsSpec("cfg", "sec")
	c := statustest.NewClient(t,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop", Labels: labelled}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "cfg"}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "sec"}},
		deploy("shop", "attacker", "v1:new", spec, map[string]string{contract.HaltAnnotation: halt}),
		deploy("shop", "victim", "v1:old", spec, nil),
		&corev1.Event{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "e1"}, Type: "Normal",
			Reason: contract.ReasonConfigChanged, Message: "ok" + esc, ReportingController: contract.EventSource,
			InvolvedObject: corev1.ObjectReference{Kind: "Deployment", Namespace: "shop", Name: "victim"},
			LastTimestamp:  metav1.NewTime(since)},
	)
	st := &fakeStamper{stamps: map[string]string{"attacker": "v1:new", "victim": "v1:new"}}
	r, err := Collect(t.Context(), c, Options{Kinds: workload.Kinds(), Namespace: "shop", Stamper: st})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteTable(&out, r, TableOptions{Details: true, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if i := bytes.IndexByte(out.Bytes(), 0x1b); i >= 0 {
		t.Errorf("the table carries a raw ESC (terminal control sequence) at byte %d:\n%q", i, out.String())
	}
}
