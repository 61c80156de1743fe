package workload

import "strings"

// warningPrefix starts every admission warning confighash sends. Warnings
// reach clients as plain text, so the prefix is the only mark they carry;
// it is written and read only through Warning and IsWarning.
const warningPrefix = "confighash: "

// Warning returns msg as an admission warning from confighash.
func Warning(msg string) string {
	return warningPrefix + msg
}

// IsWarning reports whether w is an admission warning from confighash, as
// opposed to one from another admission plugin.
func IsWarning(w string) bool {
	return strings.HasPrefix(w, warningPrefix)
}
