//go:build linux

package controlplane

import (
	"context"
	"fmt"
	"time"
)

// pollInterval balances startup latency (every poll that misses adds up to
// this much) against hammering a process that is still initialising.
const pollInterval = 100 * time.Millisecond

// waitReady polls check until it succeeds, the process exits, timeout passes
// or parent ends. A failure of the process (exit, timeout) carries its log
// tail, because "not ready" alone never says why.
func waitReady(parent context.Context, p *process, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeoutCause(parent, timeout, fmt.Errorf("not ready after %s", timeout))
	defer cancel()
	ticker := time.NewTicker(pollInterval)
	defer ticker.Stop()
	var lastErr error
	for {
		if p.exited() {
			return p.errWithTail(fmt.Errorf("%s exited during startup: %w", p.name, p.waitErr))
		}
		// Each probe gets its own short deadline so a hung connection cannot
		// eat the whole startup budget.
		probeCtx, probeCancel := context.WithTimeout(ctx, 5*time.Second)
		lastErr = check(probeCtx)
		probeCancel()
		if lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			if parent.Err() != nil {
				// The caller gave up (Ctrl-C, test deadline): the process
				// did nothing wrong, so its log would only be noise.
				return fmt.Errorf("waiting for %s: %w", p.name, context.Cause(parent))
			}
			return p.errWithTail(fmt.Errorf("waiting for %s: %w (last check: %w)", p.name, context.Cause(ctx), lastErr))
		case <-p.done:
		case <-ticker.C:
		}
	}
}
