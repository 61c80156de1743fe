//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// The confighash process's memory as the kernel sees it, for the specs and
// benches that bound it. RSS is what a container's memory limit counts.

// resetPeakRSS makes the kernel restart confighash's peak RSS (VmHWM) from
// its current RSS, so that a later peakMiB is the peak of what came after.
func resetPeakRSS(t *testing.T) {
	t.Helper()
	path := fmt.Sprintf("/proc/%d/clear_refs", env.ConfighashPID())
	// "5" resets the peak RSS only (proc(5)); it needs the process's owner.
	if err := os.WriteFile(path, []byte("5"), 0); err != nil {
		t.Fatalf("resetting confighash's peak RSS: %v", err)
	}
}

// settledRSS reads confighash's RSS once it has stopped falling (by more
// than 1 MiB in 3 s), or after 20 s: right after a burst, pages the Go
// runtime is about to give back still count, and would make a growth look
// larger or a baseline higher than what the process holds.
func settledRSS(t *testing.T) float64 {
	t.Helper()
	const step, within = 3 * time.Second, 20 * time.Second
	prev := rssMiB(t)
	for deadline := time.Now().Add(within); time.Now().Before(deadline); {
		time.Sleep(step)
		cur := rssMiB(t)
		if cur > prev-1 {
			return cur
		}
		prev = cur
	}
	return prev
}
