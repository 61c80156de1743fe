package contract

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// rolloutVersion prefixes the values of RolloutAnnotation and
// HaltAnnotation, so that a later layout can be told from this one.
const rolloutVersion = "v1"

// Change names one change of a source: the source ("configmap/NAME" or
// "secret/NAME") and a keyed digest of its whole content (16 hex digits),
// which tells one content from another and reveals nothing of it.
type Change struct {
	Source  string
	Content string
}

// String renders c as SOURCE@CONTENT, e.g. "configmap/shared@0123456789abcdef".
func (c Change) String() string { return c.Source + "@" + c.Content }

// ParseChange reads a value written by Change.String.
func ParseChange(s string) (Change, error) {
	src, content, ok := strings.Cut(s, "@")
	kind, name, okk := strings.Cut(src, "/")
	if !ok || !okk || name == "" || (kind != "configmap" && kind != "secret") || !isHex16(content) {
		return Change{}, fmt.Errorf("change %q: want configmap/NAME@HEX or secret/NAME@HEX (16 hex digits)", s)
	}
	return Change{Source: src, Content: content}, nil
}

func isHex16(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

// Rollout is the value of RolloutAnnotation: the changes a re-stamp took
// the workload to, when it was written, and the content of every source it
// read then (Read), from which the next re-stamp tells which of them
// changed.
type Rollout struct {
	Since   time.Time
	Changes []Change
	Read    []Change
	// Failing is why the workload was failing before this re-stamp (one
	// word, e.g. "ErrImagePull"); empty when it was not. Such a rollout is
	// not judged: it is no evidence for or against its changes.
	Failing string
}

// String renders the annotation value, e.g. "v1 since=2026-12-01T00:12:00Z
// changes=configmap/shared@0123456789abcdef
// read=configmap/shared@0123456789abcdef,secret/db@fedcba9876543210".
func (r Rollout) String() string {
	s := fmt.Sprintf("%s since=%s changes=%s", rolloutVersion, r.Since.UTC().Format(time.RFC3339), joinChanges(r.Changes))
	if len(r.Read) > 0 {
		s += " read=" + joinChanges(r.Read)
	}
	if r.Failing != "" {
		s += " failing=" + r.Failing
	}
	return s
}

// ParseRollout reads an annotation value written by Rollout.String.
func ParseRollout(s string) (Rollout, error) {
	f, err := fields(RolloutAnnotation, s, "since", "changes")
	if err != nil {
		return Rollout{}, err
	}
	r := Rollout{}
	if r.Since, err = time.Parse(time.RFC3339, f["since"]); err != nil {
		return Rollout{}, fmt.Errorf("%s %q: since: %w", RolloutAnnotation, s, err)
	}
	// A re-stamp may change no source (a template edited while confighash
	// was down, a source no longer read): no changes.
	if f["changes"] != "" {
		if r.Changes, err = splitChanges(f["changes"]); err != nil {
			return Rollout{}, fmt.Errorf("%s %q: %w", RolloutAnnotation, s, err)
		}
	}
	if read, ok := f["read"]; ok {
		if r.Read, err = splitChanges(read); err != nil {
			return Rollout{}, fmt.Errorf("%s %q: read: %w", RolloutAnnotation, s, err)
		}
	}
	r.Failing = f["failing"]
	return r, nil
}

// Has reports whether r took the workload to c.
func (r Rollout) Has(c Change) bool { return slices.Contains(r.Changes, c) }

// Halt is the value of HaltAnnotation: the changes whose rollout failed on
// the workload, when the hook saw it fail, and why, in one word (the
// reason of the failing condition or container state, e.g.
// "CrashLoopBackOff", "ProgressDeadlineExceeded", "RolloutTimeout").
type Halt struct {
	Since   time.Time
	Changes []Change
	Reason  string
}

// String renders the annotation value, e.g. "v1 since=2026-12-01T00:12:00Z
// changes=configmap/shared@0123456789abcdef reason=CrashLoopBackOff".
func (h Halt) String() string {
	return fmt.Sprintf("%s since=%s changes=%s reason=%s", rolloutVersion, h.Since.UTC().Format(time.RFC3339),
		joinChanges(h.Changes), h.Reason)
}

// Has reports whether h halts c.
func (h Halt) Has(c Change) bool { return slices.Contains(h.Changes, c) }

// ParseHalt reads an annotation value written by Halt.String. The value
// HaltReleased is not a halt: callers check for it first.
func ParseHalt(s string) (Halt, error) {
	f, err := fields(HaltAnnotation, s, "since", "changes", "reason")
	if err != nil {
		return Halt{}, err
	}
	h := Halt{Reason: f["reason"]}
	if h.Since, err = time.Parse(time.RFC3339, f["since"]); err != nil {
		return Halt{}, fmt.Errorf("%s %q: since: %w", HaltAnnotation, s, err)
	}
	if h.Changes, err = splitChanges(f["changes"]); err != nil {
		return Halt{}, fmt.Errorf("%s %q: %w", HaltAnnotation, s, err)
	}
	if h.Reason == "" {
		return Halt{}, fmt.Errorf("%s %q: empty reason", HaltAnnotation, s)
	}
	return h, nil
}

func joinChanges(cs []Change) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = c.String()
	}
	return strings.Join(s, ",")
}

func splitChanges(s string) ([]Change, error) {
	var cs []Change
	for _, part := range strings.Split(s, ",") {
		c, err := ParseChange(part)
		if err != nil {
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// fields splits a "v1 k=v k=v" value of annotation into its fields and
// checks that each of want is there. Keys added later under the same
// version are skipped, so an older leader still reads the value.
func fields(annotation, s string, want ...string) (map[string]string, error) {
	fs := strings.Fields(s)
	if len(fs) == 0 || fs[0] != rolloutVersion {
		return nil, fmt.Errorf("%s %q: want a value starting %q", annotation, s, rolloutVersion)
	}
	m := map[string]string{}
	for _, f := range fs[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("%s %q: %q is not key=value", annotation, s, f)
		}
		m[k] = v
	}
	var missing []error
	for _, k := range want {
		if _, ok := m[k]; !ok {
			missing = append(missing, fmt.Errorf("%s %q: %s missing", annotation, s, k))
		}
	}
	return m, errors.Join(missing...)
}
