package metricsauth

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
)

// Reviewer answers the two questions the apiserver is asked about a caller.
type Reviewer interface {
	// Authenticate returns who a token belongs to; ok is false for a token
	// the apiserver does not accept.
	Authenticate(ctx context.Context, token string) (user User, ok bool, err error)
	// Authorize says whether user may use verb on the non-resource path.
	Authorize(ctx context.Context, user User, verb, path string) (bool, error)
}

// User is an authenticated caller, as the TokenReview returned it.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// Decisions are cached this long: long enough that a scraper costs two API
// requests a minute, short enough that a revoked binding takes effect soon.
const (
	allowTTL = time.Minute
	denyTTL  = 10 * time.Second
	// knownTTL is how long an allowed caller stays known good: when its
	// decision goes stale it is asked about again without waiting on the
	// unknown-token limit.
	knownTTL = 10 * time.Minute
)

// Bounds against a caller with many tokens, none of them real.
const (
	// maxAllowed and maxDenied bound the two caches apart: junk tokens fill
	// only the denied one, so they never evict an allowed caller.
	maxAllowed = 128
	maxDenied  = 1024
	// maxTokenBytes is far above any ServiceAccount or OIDC token; a longer
	// one is refused without hashing it or asking the apiserver.
	maxTokenBytes = 16 << 10
	// reviewsPerSecond and reviewBurst limit the TokenReviews (each with
	// its SubjectAccessReview) asked about tokens that are not known good,
	// from addresses without a budget of their own (budgets.go).
	reviewsPerSecond = 5
	reviewBurst      = 10
)

// statusAllowed is the decision that lets a caller through.
const statusAllowed = http.StatusOK

// Guard wraps handlers so that only authorized callers reach them.
type Guard struct {
	reviewer Reviewer
	now      func() time.Time

	mu        sync.Mutex
	decisions *decisions
	peers     *peers
	// reviews limits the reviews of unknown tokens; a known-good caller's
	// re-review does not wait on it, and fresh and good addresses have
	// budgets of their own (budgets.go).
	reviews *rate.Limiter
	// fresh is the reserve of addresses no token of which was denied.
	fresh *rate.Limiter
}

// NewGuard returns a Guard asking r.
func NewGuard(r Reviewer) *Guard {
	return &Guard{
		reviewer:  r,
		now:       time.Now,
		decisions: newDecisions(maxAllowed, maxDenied),
		peers:     newPeers(maxGoodPeers, maxSuspectPeers, goodPeerBudget),
		reviews:   rate.NewLimiter(reviewsPerSecond, reviewBurst),
		fresh:     rate.NewLimiter(freshReviewsPerSecond, freshReviewBurst),
	}
}

// Wrap returns next behind the guard; log records failures to reach the
// apiserver. Its signature is controller-runtime's metrics server Filter.
func (g *Guard) Wrap(log logr.Logger, next http.Handler) (http.Handler, error) {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := bearerToken(r)
		if !ok {
			unauthorized(w, "Unauthorized: a bearer token is required")
			return
		}
		if len(token) > maxTokenBytes {
			unauthorized(w, "Unauthorized: the token is too long")
			return
		}
		status, err := g.decide(r.Context(), peerOf(r.RemoteAddr), token, strings.ToLower(r.Method), r.URL.Path)
		if err != nil {
			log.Error(err, "checking a metrics caller with the apiserver")
			http.Error(w, "Internal Server Error: could not check the caller", http.StatusInternalServerError)
			return
		}
		switch status {
		case http.StatusOK:
		case http.StatusUnauthorized:
			unauthorized(w, "Unauthorized: the apiserver does not accept this token")
			return
		case http.StatusTooManyRequests:
			w.Header().Set("Retry-After", "1")
			http.Error(w, "Too Many Requests: too many unknown tokens to check; retry", status)
			return
		default:
			http.Error(w, "Forbidden: this caller may not GET "+r.URL.Path, status)
			return
		}
		next.ServeHTTP(w, r)
	}), nil
}

// unauthorized answers 401 with the challenge RFC 6750 asks for.
func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="confighash metrics"`)
	http.Error(w, msg, http.StatusUnauthorized)
}

func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// decide returns the HTTP status for a caller at peer, from the cache or
// from the apiserver. A token that is not known good is reviewed only
// within the budget admit chooses for peer, else refused with 429. Errors
// are not cached: the next scrape asks again.
func (g *Guard) decide(ctx context.Context, peer netip.Addr, token, verb, path string) (int, error) {
	key := keyOf(token, verb, path)
	now := g.now()
	g.mu.Lock()
	status, known := g.decisions.lookup(key, now)
	var adm admission
	if status == 0 && !known {
		adm = g.admit(peer, now)
	}
	g.mu.Unlock()
	if status != 0 {
		return status, nil
	}
	if !known && !adm.ok {
		return http.StatusTooManyRequests, nil
	}

	status, err := g.review(ctx, token, verb, path)
	g.mu.Lock()
	defer g.mu.Unlock()
	if err != nil {
		if adm.fresh {
			g.peers.forget(peer)
		}
		return 0, err
	}
	if status == statusAllowed {
		g.decisions.allow(key, now)
		g.peers.allowed(peer, now)
	} else {
		g.decisions.deny(key, status, now)
		g.peers.denied(peer, now)
	}
	return status, nil
}

func (g *Guard) review(ctx context.Context, token, verb, path string) (int, error) {
	user, ok, err := g.reviewer.Authenticate(ctx, token)
	if err != nil {
		return 0, err
	}
	if !ok {
		return http.StatusUnauthorized, nil
	}
	allowed, err := g.reviewer.Authorize(ctx, user, verb, path)
	if err != nil {
		return 0, err
	}
	if !allowed {
		return http.StatusForbidden, nil
	}
	return statusAllowed, nil
}
