package metricsauth

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

// serveFrom sends a GET /metrics with token from remoteAddr, the TCP peer.
func serveFrom(t *testing.T, g *Guard, remoteAddr, token string) int {
	t.Helper()
	h, err := g.Wrap(logr.Discard(), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.RemoteAddr = remoteAddr
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

const scraperAddr = "192.168.7.7:51234"

// flood sends distinct junk tokens from addrs addresses in turn, perTick of
// them each time it is sent. It asks the guard directly, not through HTTP,
// to keep a long flood cheap; serveFrom checks the scraper end to end.
type flood struct {
	addrs, perTick, sent int
}

func floodAddr(i int) netip.Addr {
	return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
}

func (fl *flood) send(t *testing.T, g *Guard) {
	t.Helper()
	for range fl.perTick {
		status, err := g.decide(t.Context(), floodAddr(fl.sent%fl.addrs), fmt.Sprintf("junk-%d", fl.sent), "get", "/metrics")
		if err != nil || status == http.StatusOK {
			t.Fatalf("junk token: status %d, error %v", status, err)
		}
		fl.sent++
	}
}

const floodTick = 100 * time.Millisecond

// floodSizes are the attacks the scraper must get through: one address,
// several, and more addresses than the guard remembers.
var floodSizes = map[string]int{
	"from one address":       1,
	"from 50 addresses":      50,
	"from 10,000 addresses":  10_000,
	"from 100,000 addresses": 100_000,
}

// A Prometheus whose projected token rotated presents a new token, for the
// same identity, from the same pod: it is reviewed at its first scrape
// however long the flood has gone on, because the address its old token
// was allowed from has a budget of its own.
func TestGuardRotatedTokenGetsThroughAFlood(t *testing.T) {
	for name, addrs := range floodSizes {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			f.users["rotated-token"] = User{Name: "prometheus"}
			g := NewGuard(f)
			clock := time.Unix(1_000_000, 0)
			g.now = func() time.Time { return clock }
			if code := serveFrom(t, g, scraperAddr, "scraper-token"); code != http.StatusOK {
				t.Fatalf("scraper before the flood: status %d, want 200", code)
			}
			fl := &flood{addrs: addrs, perTick: 20}
			const scrapeEvery, rotateAt, end = 150, 1200, 1800 // ticks: 15 s, 2 min, 3 min
			for tick := 1; tick <= end; tick++ {
				clock = clock.Add(floodTick)
				fl.send(t, g)
				if tick%scrapeEvery != 0 {
					continue
				}
				token := "scraper-token"
				if tick >= rotateAt {
					token = "rotated-token"
				}
				if code := serveFrom(t, g, scraperAddr, token); code != http.StatusOK {
					t.Fatalf("scrape at %v with %s, during a flood of %d junk tokens: status %d, want 200", time.Duration(tick)*floodTick, token, fl.sent, code)
				}
			}
		})
	}
}

// A scraper from an address the guard has never seen gets through within
// two scrapes while addresses it has seen send junk, the flood having
// started with it or long before it.
func TestGuardNewScraperGetsThroughAFlood(t *testing.T) {
	const scrapeEvery, end = 150, 3000 // ticks: 15 s, 5 min
	for name, addrs := range map[string]int{"from one address": 1, "from 50 addresses": 50} {
		for _, arrive := range []int{1, 1200} { // ticks: with the flood, 2 min into it
			t.Run(fmt.Sprintf("%s, scraper from %v", name, time.Duration(arrive)*floodTick), func(t *testing.T) {
				f := newFake()
				g := NewGuard(f)
				clock := time.Unix(1_000_000, 0)
				g.now = func() time.Time { return clock }
				fl := &flood{addrs: addrs, perTick: 20}
				firstOK := 0
				for tick := 1; tick <= end; tick++ {
					clock = clock.Add(floodTick)
					fl.send(t, g)
					if tick < arrive || (tick-arrive)%scrapeEvery != 0 {
						continue
					}
					code := serveFrom(t, g, scraperAddr, "scraper-token")
					if firstOK == 0 && code == http.StatusOK {
						firstOK = tick
					}
					if firstOK != 0 && code != http.StatusOK {
						t.Fatalf("scrape at %v, after one at %v went through: status %d, want 200", time.Duration(tick)*floodTick, time.Duration(firstOK)*floodTick, code)
					}
				}
				if firstOK == 0 {
					t.Fatalf("new scraper from %v: never got through, want within two scrapes", time.Duration(arrive)*floodTick)
				}
				t.Logf("first 200 after %v", time.Duration(firstOK-arrive)*floodTick)
				if firstOK-arrive > scrapeEvery {
					t.Errorf("new scraper from %v: first 200 at %v, want within two scrapes", time.Duration(arrive)*floodTick, time.Duration(firstOK)*floodTick)
				}
			})
		}
	}
}

// Whatever the flood, unknown tokens cost the apiserver at most the shared
// limit, the reserve of fresh addresses and the good addresses' own
// budgets, which are as many as maxGoodPeers however many addresses were
// allowed a token.
func TestGuardReviewRateStaysBounded(t *testing.T) {
	const seconds = 600
	for name, addrs := range floodSizes {
		t.Run(name, func(t *testing.T) {
			f := newFake()
			g := NewGuard(f)
			clock := time.Unix(1_000_000, 0)
			g.now = func() time.Time { return clock }
			// Twice maxGoodPeers addresses that hold an allowed token, and then
			// send junk too.
			const authorized = 2 * maxGoodPeers
			for i := range authorized {
				f.users[fmt.Sprintf("auth-%d", i)] = User{Name: "prometheus"}
				if code := serveFrom(t, g, fmt.Sprintf("172.16.0.%d:1", i), fmt.Sprintf("auth-%d", i)); code != http.StatusOK {
					t.Fatalf("authorized caller %d: status %d, want 200", i, code)
				}
				clock = clock.Add(time.Second)
			}
			before := f.calls
			fl := &flood{addrs: addrs, perTick: 20}
			for tick := 1; tick <= seconds*int(time.Second/floodTick); tick++ {
				clock = clock.Add(floodTick)
				fl.send(t, g)
				if tick%10 != 0 {
					continue
				}
				for i := range authorized {
					if _, err := g.decide(t.Context(), netip.AddrFrom4([4]byte{172, 16, 0, byte(i)}), fmt.Sprintf("junk-auth-%d-%d", i, tick), "get", "/metrics"); err != nil {
						t.Fatal(err)
					}
				}
			}
			reviews := f.calls - before
			perGood := goodPeerReviewBurst + seconds*time.Second/goodPeerReviewEvery
			bound := (reviewsPerSecond+freshReviewsPerSecond)*seconds + reviewBurst + freshReviewBurst + maxGoodPeers*int(perGood)
			t.Logf("%d junk tokens in %d s: %d TokenReviews, bound %d", fl.sent+authorized*seconds, seconds, reviews, bound)
			if reviews > bound {
				t.Errorf("%d junk tokens in %d s cost %d TokenReviews, want at most %d", fl.sent+authorized*seconds, seconds, reviews, bound)
			}
			if n := len(g.peers.suspect); n > maxSuspectPeers {
				t.Errorf("suspect addresses: %d, bound %d", n, maxSuspectPeers)
			}
			if n := len(g.peers.good); n > maxGoodPeers {
				t.Errorf("good addresses: %d, bound %d", n, maxGoodPeers)
			}
		})
	}
}
