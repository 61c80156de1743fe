package restamp

import (
	"context"
	"strings"
	"testing"
)

// Setup takes no default for the key bound: the options that reach it were
// validated, so a zero is a wiring mistake, refused before anything is built.
func TestSetupRefusesZeroMaxSourceKeys(t *testing.T) {
	err := Setup(context.Background(), nil, Config{Options: DefaultOptions()})
	if err == nil || !strings.Contains(err.Error(), "--max-source-keys must be >= 1") {
		t.Fatalf("Setup with MaxSourceKeys 0: err = %v, want the --max-source-keys error", err)
	}
}
