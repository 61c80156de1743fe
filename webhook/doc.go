// Package webhook is confighash's mutating admission handler.
//
// It stamps the pod template of Deployments, StatefulSets, DaemonSets and
// CronJobs (on CREATE and UPDATE) and of Jobs and bare Pods (on CREATE) with
// the checksum of the config content the pods read. The answer is a JSON
// patch that touches only the checksum annotation.
//
// The rule that keeps admission from ever being the sole cause of a rollout:
// a write that leaves the pod template as it was (ignoring the stamp) never
// gets a newly computed stamp, and it keeps the stored one: a manifest that
// lacks the stamp (kubectl replace, a Helm or Argo CD sync) or holds a stale
// copy of it gets the stored stamp back. Fresh checksums are computed only on
// CREATE and when the template really changes, which rolls anyway. Config
// changes are the config-update hook's job; its writes change nothing but the
// stamp and come under the field manager "confighash", the only writer whose
// stamp-only change this handler passes through.
//
// A fresh checksum of a kind the hook re-stamps reads the sources live
// first, within the live-read budget (sources.PreferLive): that stamp rolls
// the pods, and the answering replica's cache may not yet have seen a
// ConfigMap written a moment before (Helm writes it just before the
// Deployment), so a cached read would roll now and the hook's correction
// again. Dry-runs read the cache only; so do Jobs and bare Pods, which the
// hook never re-stamps and which come in far greater numbers. Past the
// budget the cache answers, and the hook re-checks every template change.
//
// Before it decodes anything, the handler applies the namespace policy of
// package injection to the request's namespace, as the hook and status do:
// the configuration's namespaceSelector binds only the apiserver, and
// anyone who reaches the port can POST a review naming any namespace. For a
// namespace it does not serve it answers allowed, with no patch and one
// fixed message, so the answer reveals nothing about that namespace.
//
// The configuration's matchConditions keep the apiserver from calling for
// what the handler would pass untouched: Pods and Jobs owned by a
// controller, and workloads opted out by annotation. The handler checks both
// itself all the same, for callers other than the apiserver.
package webhook
