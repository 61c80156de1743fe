package hasher

import (
	"fmt"
	"strings"
)

// Annotations on the workload that adjust what References reports. Their
// values are comma-separated lists of Source strings, e.g.
// "configmap/app, secret/db".
const (
	// IncludeAnnotation adds sources the pod spec does not reference, such as
	// ones an application fetches from the API itself. They are read whole
	// (binaryData included) and are optional: the pods do not mount them, so
	// a missing one cannot stop them starting, and it must not freeze the
	// stamp while the sources they do mount change (a required source that
	// is missing keeps the stamp; see Result.Missing). A missing included
	// source is hashed as absent, so creating it rolls the workload once. A
	// source the spec also reads keeps the spec's requirement.
	IncludeAnnotation = "confighash.dev/include"
	// ExcludeAnnotation drops sources whose changes should not roll the
	// workload, such as ones the application reloads on its own. It wins
	// over both the spec and IncludeAnnotation.
	ExcludeAnnotation = "confighash.dev/exclude"
)

// parseSourceList parses the comma-separated value of annotation. Empty
// entries are skipped silently, so trailing commas are harmless; malformed
// entries are skipped and reported by appending to errs, which is returned.
func parseSourceList(annotation, value string, errs []error) ([]Source, []error) {
	var sources []Source
	for entry := range strings.SplitSeq(value, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		src, err := ParseSource(entry)
		if err != nil {
			errs = append(errs, fmt.Errorf("annotation %s: ignoring entry: %w", annotation, err))
			continue
		}
		sources = append(sources, src)
	}
	return sources, errs
}
