package metricsauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"golang.org/x/time/rate"
)

// fakeReviewer stands in for the apiserver: the guard's HTTP behaviour and
// caching are under test here; the deploy e2e suite runs it against a real
// apiserver with the manifests' RBAC.
type fakeReviewer struct {
	users   map[string]User // token -> user
	allowed map[string]bool // user name -> may GET /metrics
	err     error
	calls   int
	asked   []string // verb path, per Authorize
}

func (f *fakeReviewer) Authenticate(_ context.Context, token string) (User, bool, error) {
	f.calls++
	if f.err != nil {
		return User{}, false, f.err
	}
	u, ok := f.users[token]
	return u, ok, nil
}

func (f *fakeReviewer) Authorize(_ context.Context, u User, verb, path string) (bool, error) {
	f.asked = append(f.asked, verb+" "+path)
	return f.allowed[u.Name] && verb == "get" && path == "/metrics", nil
}

func newFake() *fakeReviewer {
	return &fakeReviewer{
		users:   map[string]User{"scraper-token": {Name: "prometheus"}, "other-token": {Name: "someone"}},
		allowed: map[string]bool{"prometheus": true},
	}
}

func serve(t *testing.T, g *Guard, header string) (int, bool) {
	t.Helper()
	rec, reached := serveRecorded(t, g, header)
	return rec.Code, reached
}

func serveRecorded(t *testing.T, g *Guard, header string) (*httptest.ResponseRecorder, bool) {
	t.Helper()
	reached := false
	h, err := g.Wrap(logr.Discard(), http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }))
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if header != "" {
		req.Header.Set("Authorization", header)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec, reached
}

func TestGuard(t *testing.T) {
	tests := map[string]struct {
		header    string
		err       error
		want      int
		wantCalls int
	}{
		"no header":                    {want: http.StatusUnauthorized},
		"basic auth is not a token":    {header: "Basic c2NyYXBlcjpzZWNyZXQ=", want: http.StatusUnauthorized},
		"empty bearer":                 {header: "Bearer ", want: http.StatusUnauthorized},
		"token the apiserver rejects":  {header: "Bearer forged", want: http.StatusUnauthorized, wantCalls: 1},
		"authenticated, not allowed":   {header: "Bearer other-token", want: http.StatusForbidden, wantCalls: 1},
		"allowed":                      {header: "Bearer scraper-token", want: http.StatusOK, wantCalls: 1},
		"scheme is case-insensitive":   {header: "bearer scraper-token", want: http.StatusOK, wantCalls: 1},
		"apiserver unreachable is 500": {header: "Bearer scraper-token", err: errors.New("connection refused"), want: http.StatusInternalServerError, wantCalls: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			f.err = tc.err
			code, reached := serve(t, NewGuard(f), tc.header)
			if code != tc.want {
				t.Errorf("status = %d, want %d", code, tc.want)
			}
			if reached != (tc.want == http.StatusOK) {
				t.Errorf("handler reached = %v with status %d", reached, code)
			}
			if f.calls != tc.wantCalls {
				t.Errorf("TokenReviews = %d, want %d", f.calls, tc.wantCalls)
			}
		})
	}
}

func TestGuardChallengesOn401(t *testing.T) {
	for _, header := range []string{"", "Bearer forged"} {
		rec, _ := serveRecorded(t, NewGuard(newFake()), header)
		if rec.Code != http.StatusUnauthorized || rec.Header().Get("WWW-Authenticate") == "" {
			t.Errorf("Authorization %q: status %d, WWW-Authenticate %q; want 401 with a challenge", header, rec.Code, rec.Header().Get("WWW-Authenticate"))
		}
	}
}

func TestGuardAsksAboutTheRequestedPath(t *testing.T) {
	f := newFake()
	serve(t, NewGuard(f), "Bearer scraper-token")
	if len(f.asked) != 1 || f.asked[0] != "get /metrics" {
		t.Errorf("SubjectAccessReviews asked %v, want [get /metrics]", f.asked)
	}
}

func TestGuardCachesDecisions(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	tests := map[string]struct {
		header string
		ttl    time.Duration
	}{
		"an allow for a minute":  {header: "Bearer scraper-token", ttl: allowTTL},
		"a deny for ten seconds": {header: "Bearer other-token", ttl: denyTTL},
		"an unknown token too":   {header: "Bearer forged", ttl: denyTTL},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			g := NewGuard(f)
			clock := now
			g.now = func() time.Time { return clock }
			first, _ := serve(t, g, tc.header)
			clock = now.Add(tc.ttl - time.Second)
			if again, _ := serve(t, g, tc.header); again != first || f.calls != 1 {
				t.Errorf("within the TTL: status %d (first %d), TokenReviews %d, want the cached answer and 1 review", again, first, f.calls)
			}
			clock = now.Add(tc.ttl)
			serve(t, g, tc.header)
			if f.calls != 2 {
				t.Errorf("after the TTL: TokenReviews %d, want 2", f.calls)
			}
		})
	}
}

func TestGuardDoesNotCacheErrors(t *testing.T) {
	f := newFake()
	f.err = errors.New("timeout")
	g := NewGuard(f)
	serve(t, g, "Bearer scraper-token")
	f.err = nil
	if code, _ := serve(t, g, "Bearer scraper-token"); code != http.StatusOK || f.calls != 2 {
		t.Errorf("after the apiserver recovered: status %d, TokenReviews %d; want 200 after asking again", code, f.calls)
	}
}

// unlimited lifts every review budget, to test the caches alone.
func unlimited(g *Guard) *Guard {
	g.reviews = rate.NewLimiter(rate.Inf, 0)
	g.fresh = rate.NewLimiter(rate.Inf, 0)
	g.peers.budget = func() *rate.Limiter { return rate.NewLimiter(rate.Inf, 0) }
	return g
}

func TestGuardCachesAreBounded(t *testing.T) {
	f := newFake()
	for i := range maxAllowed + 10 {
		f.users[fmt.Sprintf("good-%d", i)] = User{Name: "prometheus"}
	}
	g := unlimited(NewGuard(f))
	for i := range maxAllowed + 10 {
		serve(t, g, fmt.Sprintf("Bearer good-%d", i))
	}
	for i := range maxDenied + 10 {
		serve(t, g, fmt.Sprintf("Bearer token-%d", i))
	}
	if n := len(g.decisions.allowed); n > maxAllowed {
		t.Errorf("allowed cache holds %d entries, bound is %d", n, maxAllowed)
	}
	if n := len(g.decisions.denied); n > maxDenied {
		t.Errorf("denied cache holds %d entries, bound is %d", n, maxDenied)
	}
}

// A flood of junk tokens must not cost the real scraper its cached allow
// (the cache used to be emptied when full), nor cost the apiserver a review
// per junk token.
func TestGuardJunkTokensKeepTheScraperCached(t *testing.T) {
	f := newFake()
	g := NewGuard(f)
	clock := time.Unix(1_000_000, 0)
	g.now = func() time.Time { return clock }
	if code, _ := serve(t, g, "Bearer scraper-token"); code != http.StatusOK {
		t.Fatalf("scraper: status %d, want 200", code)
	}
	for i := range 2000 {
		serve(t, g, fmt.Sprintf("Bearer junk-%d", i))
	}
	if f.calls > 1+reviewBurstForTest {
		t.Errorf("2000 junk tokens cost %d TokenReviews, want at most the burst of %d", f.calls-1, reviewBurstForTest)
	}
	before := f.calls
	if code, _ := serve(t, g, "Bearer scraper-token"); code != http.StatusOK || f.calls != before {
		t.Errorf("scraper after the flood: status %d, %d more TokenReviews; want 200 from the cache", code, f.calls-before)
	}
}

// The same with the review limit lifted: junk fills the denied cache only.
func TestGuardJunkNeverEvictsAnAllow(t *testing.T) {
	f := newFake()
	g := unlimited(NewGuard(f))
	serve(t, g, "Bearer scraper-token")
	for i := range 3 * maxDenied {
		serve(t, g, fmt.Sprintf("Bearer junk-%d", i))
	}
	before := f.calls
	if code, _ := serve(t, g, "Bearer scraper-token"); code != http.StatusOK || f.calls != before {
		t.Errorf("scraper after the flood: status %d, %d more TokenReviews; want 200 from the cache", code, f.calls-before)
	}
}

// reviewBurstForTest is the review limit's burst, spelled out so that these
// tests also build against a guard without a limit.
const reviewBurstForTest = 10

func TestGuardLimitsReviewsOfUnknownTokens(t *testing.T) {
	if reviewBurst != reviewBurstForTest {
		t.Fatalf("reviewBurstForTest is %d, the guard's burst %d", reviewBurstForTest, reviewBurst)
	}
	f := newFake()
	g := NewGuard(f)
	clock := time.Unix(1_000_000, 0)
	g.now = func() time.Time { return clock }
	throttled := 0
	for i := range 100 {
		rec, reached := serveRecorded(t, g, fmt.Sprintf("Bearer junk-%d", i))
		if reached {
			t.Fatalf("junk-%d reached the handler", i)
		}
		if rec.Code == http.StatusTooManyRequests {
			throttled++
			if rec.Header().Get("Retry-After") == "" {
				t.Errorf("429 without Retry-After")
			}
		}
	}
	if f.calls != reviewBurstForTest || throttled != 100-reviewBurstForTest {
		t.Errorf("100 unknown tokens at once: %d TokenReviews, %d refused with 429; want %d and %d", f.calls, throttled, reviewBurstForTest, 100-reviewBurstForTest)
	}
	clock = clock.Add(time.Second)
	for i := range 100 {
		serve(t, g, fmt.Sprintf("Bearer later-%d", i))
	}
	if got := f.calls - reviewBurstForTest; got != reviewsPerSecond {
		t.Errorf("a second later: %d more TokenReviews, want %d", got, reviewsPerSecond)
	}
}

// A scraper allowed before is asked about again when its allow goes stale,
// even while junk has used up the review limit; once it is no longer known
// it waits on the limit like anyone else; a revoked one is forgotten.
func TestGuardKnownCallerBypassesTheLimit(t *testing.T) {
	f := newFake()
	g := NewGuard(f)
	start := time.Unix(1_000_000, 0)
	clock := start
	g.now = func() time.Time { return clock }
	exhaust := func(tag string) {
		for i := range 2 * reviewBurst {
			serve(t, g, fmt.Sprintf("Bearer %s-%d", tag, i))
		}
	}
	serve(t, g, "Bearer scraper-token")

	clock = start.Add(allowTTL)
	exhaust("a")
	before := f.calls
	if code, _ := serve(t, g, "Bearer scraper-token"); code != http.StatusOK || f.calls != before+1 {
		t.Errorf("stale known caller with the limit used up: status %d, %d TokenReviews; want 200 after one review", code, f.calls-before)
	}

	clock = clock.Add(knownTTL)
	exhaust("b")
	if code, _ := serve(t, g, "Bearer scraper-token"); code != http.StatusTooManyRequests {
		t.Errorf("caller no longer known, limit used up: status %d, want 429", code)
	}

	clock = clock.Add(time.Hour)
	serve(t, g, "Bearer scraper-token")
	f.allowed["prometheus"] = false
	clock = clock.Add(allowTTL)
	exhaust("c")
	if code, _ := serve(t, g, "Bearer scraper-token"); code != http.StatusForbidden {
		t.Errorf("known caller whose binding was revoked: status %d, want 403", code)
	}
	clock = clock.Add(denyTTL)
	exhaust("d")
	if code, _ := serve(t, g, "Bearer scraper-token"); code != http.StatusTooManyRequests {
		t.Errorf("revoked caller is still treated as known: status %d, want 429", code)
	}
}

func TestGuardRefusesOverlongTokensUnread(t *testing.T) {
	f := newFake()
	g := NewGuard(f)
	huge := strings.Repeat("x", 64<<10)
	rec, reached := serveRecorded(t, g, "Bearer "+huge)
	if rec.Code != http.StatusUnauthorized || reached || f.calls != 0 {
		t.Errorf("a 64 KiB token: status %d, reached %v, %d TokenReviews; want 401 without a review", rec.Code, reached, f.calls)
	}
	// A long but plausible token (an OIDC token with many groups) is asked about.
	f.users[strings.Repeat("y", 8<<10)] = User{Name: "prometheus"}
	if code, _ := serve(t, g, "Bearer "+strings.Repeat("y", 8<<10)); code != http.StatusOK {
		t.Errorf("an 8 KiB token: status %d, want 200", code)
	}
}
