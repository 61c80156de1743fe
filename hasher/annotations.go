package hasher

import (
	"fmt"
	"strings"
)

// parseSourceList parses the comma-separated value of annotation
// (contract.IncludeAnnotation or contract.ExcludeAnnotation), a list of
// Source strings, e.g. "configmap/app, secret/db". Empty
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
