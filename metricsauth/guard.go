package metricsauth

import (
	"context"
	"crypto/sha256"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
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
	// maxEntries bounds the cache against a flood of distinct tokens; when
	// full it is simply emptied.
	maxEntries = 1024
)

// Guard wraps handlers so that only authorized callers reach them.
type Guard struct {
	reviewer Reviewer
	now      func() time.Time

	mu    sync.Mutex
	cache map[[sha256.Size]byte]decision
}

type decision struct {
	status  int // http.StatusOK, StatusUnauthorized or StatusForbidden
	expires time.Time
}

// NewGuard returns a Guard asking r.
func NewGuard(r Reviewer) *Guard {
	return &Guard{reviewer: r, now: time.Now, cache: map[[sha256.Size]byte]decision{}}
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
		status, err := g.decide(r.Context(), token, strings.ToLower(r.Method), r.URL.Path)
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

// decide returns the HTTP status for a caller, from the cache or from the
// apiserver. Errors are not cached: the next scrape asks again.
func (g *Guard) decide(ctx context.Context, token, verb, path string) (int, error) {
	// The key hashes the token so the cache holds no credentials.
	key := sha256.Sum256([]byte(verb + "\x00" + path + "\x00" + token))
	now := g.now()
	g.mu.Lock()
	d, ok := g.cache[key]
	g.mu.Unlock()
	if ok && now.Before(d.expires) {
		return d.status, nil
	}

	status, err := g.review(ctx, token, verb, path)
	if err != nil {
		return 0, err
	}
	ttl := denyTTL
	if status == http.StatusOK {
		ttl = allowTTL
	}
	g.mu.Lock()
	if len(g.cache) >= maxEntries {
		clear(g.cache)
	}
	g.cache[key] = decision{status: status, expires: now.Add(ttl)}
	g.mu.Unlock()
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
	return http.StatusOK, nil
}
