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
// or ctx ends. Every failure carries the process log tail, because "not
// ready" alone never says why.
func waitReady(ctx context.Context, p *process, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, fmt.Errorf("not ready after %s", timeout))
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
			return p.errWithTail(fmt.Errorf("waiting for %s: %w (last check: %v)", p.name, context.Cause(ctx), lastErr))
		case <-p.done:
		case <-ticker.C:
		}
	}
}
