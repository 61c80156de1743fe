package restamp

import (
	"time"
)

// holdSince is the Since of a hold that begins at now: whole seconds, so
// that it survives the annotation unchanged.
func holdSince(now time.Time) time.Time {
	return now.UTC().Truncate(time.Second)
}
