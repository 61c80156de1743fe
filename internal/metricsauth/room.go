package metricsauth

import "time"

// makeRoom readies m, a table of at most limit entries, for one more: a full
// table first drops what has expired by now, then, if still full, the
// entry that would expire soonest.
func makeRoom[K comparable, V any](m map[K]V, limit int, expiry func(V) time.Time, now time.Time) {
	if len(m) < limit {
		return
	}
	var soonest K
	var soonestAt time.Time
	for k, v := range m {
		at := expiry(v)
		if !now.Before(at) {
			delete(m, k)
			continue
		}
		if soonestAt.IsZero() || at.Before(soonestAt) {
			soonest, soonestAt = k, at
		}
	}
	if len(m) >= limit {
		delete(m, soonest)
	}
}
