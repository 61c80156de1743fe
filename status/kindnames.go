package status

import (
	"strings"

	"github.com/confighash/confighash/workload"
)

// The texts below name the kinds status reports on. They are built from the
// registry so that a kind added to workload shows up in help and errors
// without an edit here.

// kindNames lists the lower-case names of the kinds status reports on.
func kindNames() []string {
	var names []string
	for _, k := range workload.MutableKinds() {
		names = append(names, strings.ToLower(k.GVK.Kind))
	}
	return names
}

// KindsHelp says which KIND values a target accepts, for usage texts:
// "deployment, statefulset, … (or deploy, sts, …)".
func KindsHelp() string {
	var shorts []string
	for _, k := range workload.MutableKinds() {
		shorts = append(shorts, k.ShortNames...)
	}
	help := strings.Join(kindNames(), ", ")
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
