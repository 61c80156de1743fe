// Package workload is the one place that knows where each kind keeps its pod
// template. The webhook (its handler and its admission rules), the RBAC
// table, the config-update hook and the status command all go through it, so
// adding a kind means touching this package only among the Go code. The
// shipped manifests and chart are YAML and list the rules and RBAC by hand;
// e2e/deploy compares them to the code, so it fails until they are updated.
package workload
