//go:build e2e

package deploy

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/confighash/confighash/e2e/controlplane"
)

// One control plane serves every e2e test of this package.
var (
	cpOnce sync.Once
	cp     *controlplane.ControlPlane
	cpErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if cp != nil {
		if err := cp.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the control plane:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// controlPlane starts the local control plane on first use, building its
// binaries first if they are not cached (minutes, once).
func controlPlane(t *testing.T) *controlplane.ControlPlane {
	t.Helper()
	cpOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		_, bins, err := controlplane.EnsureRepoBinaries(ctx, os.Stderr)
		if err != nil {
			cpErr = err
			return
		}
		begin := time.Now()
		cp, cpErr = controlplane.Start(ctx, bins, controlplane.Options{})
		if cpErr == nil {
			fmt.Fprintf(os.Stderr, "control plane %s ready in %s\n", controlplane.KubernetesVersion, time.Since(begin).Round(time.Millisecond))
		}
	})
	if cpErr != nil {
		t.Fatal(cpErr)
	}
	return cp
}
