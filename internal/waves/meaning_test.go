package waves

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/confighash/confighash/internal/contract"
)

func TestOffAndPace(t *testing.T) {
	off := map[string]string{contract.WavesAnnotation: contract.WavesOff}
	for _, v := range []string{"Off", "off ", "true", ""} {
		if Off(map[string]string{contract.WavesAnnotation: v}) {
			t.Errorf("Off(%q) = true; only %q opts out", v, contract.WavesOff)
		}
	}
	if !Off(off) || Off(nil) {
		t.Error("Off: want true for off, false for none")
	}
	tests := []struct {
		reader    map[string]string
		sourceOff bool
		maxWave   int
		noPod     bool
		want      Pace
	}{
		{nil, false, 16, false, InWaves},
		{nil, false, 0, false, AtOnceEverywhere},
		{off, true, 16, true, AtOnceReader},
		{nil, true, 16, true, AtOnceSource},
		{nil, false, 16, true, AtOnceNoPod},
	}
	for _, tc := range tests {
		if got := PaceOf(tc.reader, tc.sourceOff, tc.maxWave, tc.noPod); got != tc.want {
			t.Errorf("PaceOf(%v, %v, %d, %v) = %q, want %q", tc.reader, tc.sourceOff, tc.maxWave, tc.noPod, got, tc.want)
		}
	}
	for p, want := range map[Pace]bool{InWaves: true, AtOnceNoPod: true, AtOnceReader: false, AtOnceSource: false, AtOnceEverywhere: false} {
		if p.HeldBackByHalts() != want {
			t.Errorf("%q.HeldBackByHalts() = %v, want %v", p, !want, want)
		}
	}
}

func TestHaltOf(t *testing.T) {
	cm := contract.Change{Source: "configmap/app", Content: "0123456789abcdef"}
	older := contract.Change{Source: "configmap/app", Content: "fedcba9876543210"}
	db := contract.Change{Source: "secret/db", Content: "0123456789abcdef"}
	rec := contract.Halt{Since: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Changes: []contract.Change{cm, db}, Reason: "X"}
	accept := func(string) (contract.Halt, error) { return rec, nil }
	refuse := func(string) (contract.Halt, error) { return contract.Halt{}, contract.ErrRecordForged }
	ann := func(v string) map[string]string { return map[string]string{contract.HaltAnnotation: v} }

	if h := HaltOf(nil, accept); h.State != NoHalt || h.Stops(cm) || h.Names("configmap/app") {
		t.Errorf("none: %+v", h)
	}
	if h := HaltOf(ann(contract.HaltReleased), refuse); h.State != HaltReleased || h.Stops(cm) || !Released(ann(contract.HaltReleased)) {
		t.Errorf("released needs no seal and stops nothing: %+v", h)
	}
	if h := HaltOf(ann("x"), refuse); h.State != HaltIgnored || !errors.Is(h.Err, contract.ErrRecordForged) || h.Stops(cm) || h.Names("configmap/app") || h.Others("configmap/app") != nil {
		t.Errorf("refused: %+v", h)
	}
	h := HaltOf(ann("x"), accept)
	if h.State != HaltInForce || !h.Stops(cm) || h.Stops(older) || !h.Names("configmap/app") || h.Names("configmap/other") {
		t.Errorf("in force: %+v", h)
	}
	if got := h.Others("configmap/app"); !slices.Equal(got, []string{"secret/db"}) {
		t.Errorf("Others = %v, want secret/db", got)
	}
}

func TestHoldOf(t *testing.T) {
	rec := contract.Hold{Since: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Quiet: time.Minute}
	ann := map[string]string{contract.HoldAnnotation: "x"}
	if h := HoldOf(nil, nil); h.State != NoHold || h.Waits() {
		t.Errorf("none: %+v", h)
	}
	if h := HoldOf(ann, func(string) (contract.Hold, error) { return contract.Hold{}, contract.ErrRecordUnsealed }); h.State != HoldIgnored || h.Waits() {
		t.Errorf("refused: %+v", h)
	}
	if h := HoldOf(ann, func(string) (contract.Hold, error) { return rec, nil }); !h.Waits() || h.Record != rec {
		t.Errorf("in force: %+v", h)
	}
}
