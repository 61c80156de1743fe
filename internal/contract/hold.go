package contract

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// holdVersion prefixes HoldAnnotation's value, so that a later layout can be
// told from this one.
const holdVersion = "v1"

// Hold is the value of HoldAnnotation. String writes it and ParseHold reads
// it; nothing else spells the format.
type Hold struct {
	// Since is when the hold began, in whole seconds as the annotation
	// keeps it: it is also what tells one hold from another, so the hold a
	// leader remembers and the one it wrote must be equal.
	Since time.Time
	// Level is the backoff level: each hold that follows closely on the end
	// of the previous one doubles the quiet time.
	Level int
	// Quiet is how long the sources must go unchanged before the workload
	// takes their latest content, as the leader that wrote it was set up.
	// The leader counts from the last change it saw itself; a new leader has
	// seen none, so it counts from when it took over.
	Quiet time.Duration
}

// String renders the annotation value, e.g.
// "v1 since=2026-12-01T00:12:00Z level=1 quiet=2m0s".
func (h Hold) String() string {
	return fmt.Sprintf("%s since=%s level=%d quiet=%s", holdVersion,
		h.Since.UTC().Format(time.RFC3339), h.Level, h.Quiet)
}

// ParseHold reads an annotation value written by String.
func ParseHold(s string) (Hold, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 || fields[0] != holdVersion {
		return Hold{}, fmt.Errorf("%s %q: want a value starting %q", HoldAnnotation, s, holdVersion)
	}
	var h Hold
	seen := map[string]bool{}
	for _, f := range fields[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return Hold{}, fmt.Errorf("%s %q: %q is not key=value", HoldAnnotation, s, f)
		}
		var err error
		switch k {
		case "since":
			h.Since, err = time.Parse(time.RFC3339, v)
		case "level":
			h.Level, err = strconv.Atoi(v)
			if err == nil && h.Level < 0 {
				err = errors.New("negative")
			}
		case "quiet":
			h.Quiet, err = time.ParseDuration(v)
			if err == nil && h.Quiet < 0 {
				err = errors.New("negative")
			}
		default:
			// Keys added later under the same version are skipped, so an
			// older leader still honours the hold.
			continue
		}
		if err != nil {
			return Hold{}, fmt.Errorf("%s %q: %s: %w", HoldAnnotation, s, k, err)
		}
		seen[k] = true
	}
	for _, k := range []string{"since", "level", "quiet"} {
		if !seen[k] {
			return Hold{}, fmt.Errorf("%s %q: %s missing", HoldAnnotation, s, k)
		}
	}
	return h, nil
}
