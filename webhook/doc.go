// Package webhook is confighash's mutating admission handler.
//
// It stamps the pod template of Deployments, StatefulSets, DaemonSets and
// CronJobs (on CREATE and UPDATE) and of Jobs and bare Pods (on CREATE) with
// the checksum of the config content the pods read. The answer is a JSON
// patch that touches only the checksum annotation and, on an UPDATE, the
// hook's records on the workload's own metadata: kept as they were against
// other writers (records.go), and a rollback's halt (rollback.go).
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
// first, within the live-read budget (sources.PreferLive), all at once
// (sources.Reader.Prefetch), taking nothing read before the admission
// began: that stamp rolls the pods, and neither the answering replica's
// cache nor an earlier read need have seen a ConfigMap written a moment
// before (Helm writes it just before the Deployment), so a cached read
// would roll now and the hook's correction again. Dry-runs read the cache
// only; so do Jobs and bare Pods, which the hook never re-stamps and which
// come in far greater numbers. Past the budget the cache answers, and the
// hook re-checks every template change.
//
// Before it decodes anything, the handler applies the namespace policy of
// package injection to the request's namespace, as the hook and status do:
// the configuration's namespaceSelector binds only the apiserver, and
// anyone who reaches the port can POST a review naming any namespace. For a
// namespace it does not serve it answers allowed, with no patch and one
// fixed message, so the answer reveals nothing about that namespace.
//
// With Callers set (--webhook-client-ca-file), only the apiserver, known by
// the client certificate it presents, gets an answer that depends on the
// request; anyone else gets one fixed answer (see Callers). Without it, any
// caller that reaches the port is answered for every served namespace.
//
// No answer ever compares content with a stamp confighash did not store
// itself: a stamp not of the current format (a legacy v1 stamp) is treated as
// no stamp, and no write keeps one (see foreign).
//
// The configuration's matchConditions keep the apiserver from calling for
// what the handler would pass untouched: Pods and Jobs owned by a
// controller, and workloads opted out by annotation. The handler checks both
// itself all the same, for callers other than the apiserver; a foreign stamp
// stored on an opted-out workload is left there (nothing compares it) and
// replaced when the workload opts back in.
//
// Anyone who reaches the port is also bounded before the handler runs
// (Limits, Server): connections per source address at the listener, a
// request body read in full within a memory budget (taken by declared
// length, all or nothing, in the whole server and per address) and the
// read timeout, and only then a slot for the work. A caller that trickles
// its body holds a goroutine and its room in the budget, never a slot, so
// slow callers cannot turn the apiserver's calls into 503s.
//
// # Stages
//
// A request meets the package's files in this order:
//
//  1. listener.go and server.go: connections per source address, TLS,
//     HTTP/2 streams and flow-control windows (Server);
//  2. caller.go: which callers are the apiserver, and their own limits for
//     the others (Callers.Endpoint);
//  3. limits.go and buffers.go: the body limit, the body budget and the
//     read timeout, then a slot (Limits);
//  4. endpoint.go: Endpoint chains the stages, the limits first; review.go:
//     the review's decoding, the handler, and the one rewrite of its answer
//     (answer) before it is encoded, once: the answer is never buffered or
//     decoded again;
//  5. handler.go: the namespace policy (namespace.go), the object's decoding
//     (decode.go), opted-out workloads (optedout.go), stamps confighash
//     does not write (stampformat.go), the hook's records (records.go), a
//     rollback of a pinned workload (rollback.go), the checksum, and the
//     patch (patch.go); unhandled.go admits what could not be handled.
//
// Around them: configuration.go and matchconditions.go build what the
// apiserver is told, options.go the settings an operator may change, and
// metrics.go the series every stage counts in.
//
// The review and the object are each decoded in one pass. The
// deserializer controller-runtime uses reads JSON twice, once with
// encoding/json to learn its apiVersion and kind; decode.go and review.go
// read them from the one decoding where that cannot differ
// (plainTypeKeys), and hand anything else to the deserializer, so that
// every answer is the one it gave.
package webhook
