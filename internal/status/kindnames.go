package status

import (
	"strings"

	"github.com/confighash/confighash/internal/workload"
)

// The texts below name the kinds status reports on. They are built from the
// registry so that a kind added to workload shows up in help and errors
// without an edit here.

// kindNames lists the lower-case names of the kinds of reg status reports
// on; a custom kind's is qualified by its group, as kubectl accepts it.
func kindNames(reg workload.Registry) []string {
	var names []string
	for _, k := range reg.Mutable() {
		names = append(names, strings.ToLower(k.Name()))
	}
	return names
}

// KindsHelp says which KIND values a target accepts, for usage texts:
// "deployment, statefulset, … (or deploy, sts, …)". It names the built-in
// kinds; those --workload-kind adds are accepted too.
func KindsHelp() string {
	var shorts []string
	for _, k := range workload.Kinds().Mutable() {
		shorts = append(shorts, k.ShortNames...)
	}
	help := strings.Join(kindNames(workload.Kinds()), ", ")
	if len(shorts) > 0 {
		help += " (or " + strings.Join(shorts, ", ") + ")"
	}
	return help
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
