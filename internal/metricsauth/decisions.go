package metricsauth

import (
	"crypto/sha256"
	"time"
)

// tokenKey identifies a (verb, path, token) question. It hashes the token so
// the caches hold no credentials.
type tokenKey [sha256.Size]byte

func keyOf(token, verb, path string) tokenKey {
	return sha256.Sum256([]byte(verb + "\x00" + path + "\x00" + token))
}

// allowEntry is a caller the apiserver allowed. It is served from the cache
// until fresh, and is known good until known: a known caller whose decision
// went stale is asked about again ahead of the unknown-token limit, so a
// flood of junk tokens cannot lock a real scraper out.
type allowEntry struct {
	fresh, known time.Time
}

// decisions holds the allowed and the denied decisions apart, each bounded.
// Only a token the apiserver authenticated and authorized gets into allowed,
// so tokens nobody was given can fill denied, never allowed. Not safe for
// concurrent use: Guard locks around it.
type decisions struct {
	allowed    map[tokenKey]allowEntry
	denied     map[tokenKey]deniedEntry
	maxAllowed int
	maxDenied  int
}

type deniedEntry struct {
	status  int // http.StatusUnauthorized or http.StatusForbidden
	expires time.Time
}

func newDecisions(maxAllowed, maxDenied int) *decisions {
	return &decisions{
		allowed:    map[tokenKey]allowEntry{},
		denied:     map[tokenKey]deniedEntry{},
		maxAllowed: maxAllowed,
		maxDenied:  maxDenied,
	}
}

// lookup returns the cached status for k at now (0 when nothing fresh is
// cached) and whether k is a known-good caller whose decision went stale.
func (d *decisions) lookup(k tokenKey, now time.Time) (status int, known bool) {
	if a, ok := d.allowed[k]; ok {
		if now.Before(a.fresh) {
			return statusAllowed, true
		}
		if now.Before(a.known) {
			return 0, true
		}
		delete(d.allowed, k)
	}
	if e, ok := d.denied[k]; ok {
		if now.Before(e.expires) {
			return e.status, false
		}
		delete(d.denied, k)
	}
	return 0, false
}

// allow records an allowed decision. A full cache first drops what is no
// longer known, then the entry that would stop being known soonest.
func (d *decisions) allow(k tokenKey, now time.Time) {
	delete(d.denied, k)
	if _, ok := d.allowed[k]; !ok {
		makeRoom(d.allowed, d.maxAllowed, func(a allowEntry) time.Time { return a.known }, now)
	}
	d.allowed[k] = allowEntry{fresh: now.Add(allowTTL), known: now.Add(knownTTL)}
}

// deny records a denied decision. It forgets k as known good (a revoked
// binding takes effect), and evicts only denied entries when full: expired
// ones, else any one. Entries arrive no faster than the review budgets
// allow, so the scan of a full cache is paid at most that often.
func (d *decisions) deny(k tokenKey, status int, now time.Time) {
	delete(d.allowed, k)
	if _, ok := d.denied[k]; !ok && len(d.denied) >= d.maxDenied {
		for key, e := range d.denied {
			if !now.Before(e.expires) {
				delete(d.denied, key)
			}
		}
		for key := range d.denied {
			if len(d.denied) < d.maxDenied {
				break
			}
			delete(d.denied, key)
		}
	}
	d.denied[k] = deniedEntry{status: status, expires: now.Add(denyTTL)}
}
