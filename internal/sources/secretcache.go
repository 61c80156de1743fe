package sources

import (
	"k8s.io/apimachinery/pkg/fields"
	"sigs.k8s.io/controller-runtime/pkg/cache"
)

// HelmReleaseType is the type of the Secrets in which Helm keeps every
// release revision. Clusters hold thousands of them, each up to 1 MiB, and
// no pod is meant to read one; yet without a selector the informer would
// receive, decode and digest every one on each list and each upgrade.
const HelmReleaseType = "helm.sh/release.v1"

// SecretCache is how the informer caches Secrets: slimmed, and, with
// ignoreHelmReleases, without Helm's release Secrets, which the apiserver
// then never sends (a field selector, so they are filtered before the
// list is encoded, not after it is decoded).
//
// A template that does read a release Secret still gets a correct stamp
// from the webhook: the cache misses it, and the Reader's bounded live GET
// finds it. The hook does not see such a Secret change (it is not watched),
// so its readers do not roll on a change of it, and a re-stamp for another
// source counts it as missing: a required one makes the hook keep the stamp
// (a SourceMissing warning), an optional one is hashed as absent and the
// workload rolls once. Turn the selector off
// (--ignore-helm-release-secrets=false) for such workloads.
func SecretCache(ignoreHelmReleases bool) cache.ByObject {
	return Slimmer{}.SecretCache(ignoreHelmReleases)
}

// SecretCache is the package's SecretCache, slimmed by s.
func (s Slimmer) SecretCache(ignoreHelmReleases bool) cache.ByObject {
	b := cache.ByObject{Transform: s.SlimInPlace}
	if ignoreHelmReleases {
		b.Field = fields.OneTermNotEqualSelector("type", HelmReleaseType)
	}
	return b
}
