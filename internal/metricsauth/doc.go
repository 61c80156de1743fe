// Package metricsauth guards confighash's metrics endpoint the way the
// control plane guards its own: a caller must present a bearer token the
// apiserver accepts (TokenReview) and be allowed to GET the path
// (SubjectAccessReview on a non-resource URL, granted by the
// confighash-metrics-reader ClusterRole).
//
// controller-runtime ships such a filter, but it pulls in k8s.io/apiserver
// and, through it, gRPC, OpenTelemetry and CEL: 29 MB more binary for two
// API calls. This package makes the same two calls with client-go and caches
// each decision briefly, so a scraper costs the apiserver two requests a
// minute, not two per scrape.
//
// Anyone who can reach the port can send tokens, so nothing a caller sends
// may cost unbounded memory or apiserver requests, or lock the real scraper
// out:
//   - allowed and denied decisions live in two caches, each bounded; only a
//     token the apiserver allowed enters the allowed one, so junk tokens
//     fill and evict the denied cache only;
//   - a caller allowed within knownTTL is known good: when its minute-long
//     allow goes stale it is reviewed again without waiting on any limit;
//     a denial on that review forgets it;
//   - any other token is reviewed from a budget chosen by the caller's TCP
//     peer address (budgets.go): an address a token was allowed from has a
//     small one of its own (a scraper whose token rotated); others share
//     reviewsPerSecond (burst reviewBurst), and an address none of whose
//     tokens was denied lately gets one review from a reserve when that is
//     spent. Past its budget the caller gets 429 and Retry-After. The
//     budgets bound the reviews a second; the addresses remembered are
//     bounded too (peers.go);
//   - a token longer than maxTokenBytes is refused without being hashed or
//     sent to the apiserver.
package metricsauth
