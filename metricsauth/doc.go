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
package metricsauth
