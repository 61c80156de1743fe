package metricsauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
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

func TestGuardCacheIsBounded(t *testing.T) {
	f := newFake()
	g := NewGuard(f)
	for i := range maxEntries + 10 {
		serve(t, g, fmt.Sprintf("Bearer token-%d", i))
	}
	if n := len(g.cache); n > maxEntries {
		t.Errorf("cache holds %d entries, bound is %d", n, maxEntries)
	}
}
