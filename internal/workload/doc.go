// Package workload is the one place that knows where each kind keeps its pod
// template. The webhook (its handler and its admission rules), the RBAC
// table, the config-update hook and the status command all go through it, so
// adding a kind means touching this package only among the Go code. The
// shipped manifests and chart are YAML and list the rules and RBAC by hand;
// e2e/deploy compares them to the code, so it fails until they are updated.
//
// The kinds are served as one Registry (NewRegistry: the built-in Kinds and
// those --workload-kind adds), resolved once where confighash's options
// become its running configuration (cmd/confighash/app, for serve and for
// status) and handed to every part that needs kinds. There is no API for
// "the built-in kinds" besides Kinds itself, and no part takes a nil
// registry to mean them.
//
// ReadsOf is the one answer to "what does this workload read": the
// template, its references, and why confighash reads nothing for it (opted
// out, owned, no template, over MaxSources). The webhook, the hook, the
// hook's readers index and the status command all ask it, so that they
// cannot disagree on which workloads are left alone.
//
// SlimObject is what the hook's cache holds of a workload (Registry.Transform
// is the manager's cache transform): bounded per object whatever a tenant
// puts in it, and read by ReadsOf, hasher.Checksum, SameTemplate and the
// rollout judge exactly as the whole object is. In a namespace confighash
// does not serve the cache holds IdentityObject instead, its identity
// alone, which ReadsOf reads as SkipNotHeld; when the namespace becomes
// served, Filler reads its workloads live and FilledCache (the manager's
// cache) gives their slimmed copies in place of the identity copies, to
// Get, List and the hook's index alike. ReadsOf bounds what a
// template reads (MaxSources, MaxReferenceBytes) for the webhook and the
// hook alike, and that bound is what bounds the copy's references.
package workload
