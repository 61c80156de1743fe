// Package workload is the one place that knows where each kind keeps its pod
// template. The webhook, the config-update hook and the status command all go
// through it, so adding a kind means touching this package only.
package workload
