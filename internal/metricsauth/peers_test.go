package metricsauth

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"testing"
	"time"
)

func TestPeerOf(t *testing.T) {
	tests := map[string]string{
		"192.0.2.1:1234":          "192.0.2.1",
		"[2001:db8::1]:443":       "2001:db8::1",
		"[::ffff:192.0.2.1]:1234": "192.0.2.1", // one address, however the socket spells it
		"192.0.2.1":               "192.0.2.1",
		"@":                       "invalid IP",
		"":                        "invalid IP",
	}
	for in, want := range tests {
		if got := peerOf(in).String(); got != want {
			t.Errorf("peerOf(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestPeersSuspectTableIsBounded(t *testing.T) {
	p := newPeers(1, 2, goodPeerBudget)
	now := time.Unix(1_000_000, 0)
	a := func(i byte) netip.Addr { return netip.AddrFrom4([4]byte{10, 0, 0, i}) }
	if !p.denied(a(1), now) || !p.denied(a(2), now) {
		t.Fatal("a table with room refused an address")
	}
	if p.denied(a(3), now) || p.suspectAt(a(3), now) {
		t.Error("a full table recorded a third address")
	}
	if !p.denied(a(1), now.Add(time.Minute)) || !p.suspectAt(a(1), now.Add(suspectTTL)) {
		t.Error("an address already recorded was not kept suspect by a new denial")
	}
	later := now.Add(suspectTTL)
	if !p.denied(a(3), later) || len(p.suspect) > 2 || p.suspectAt(a(2), later) {
		t.Errorf("after a(2) expired: table %v, want a(1) and a(3)", p.suspect)
	}
}

func TestPeersGoodTableIsBounded(t *testing.T) {
	p := newPeers(2, 2, goodPeerBudget)
	now := time.Unix(1_000_000, 0)
	a := func(i byte) netip.Addr { return netip.AddrFrom4([4]byte{10, 0, 0, i}) }
	p.allowed(a(1), now)
	p.allowed(a(2), now.Add(time.Second))
	budget := p.goodAt(a(2), now).reviews
	p.allowed(a(2), now.Add(2*time.Second))
	if p.goodAt(a(2), now).reviews != budget {
		t.Error("a good address allowed again got a new budget: each allowed token would refill it")
	}
	p.allowed(a(3), now.Add(3*time.Second))
	if len(p.good) != 2 || p.goodAt(a(1), now) != nil {
		t.Errorf("full table: %d good addresses, a(1) kept %v; want 2, a(1), the soonest to expire, dropped", len(p.good), p.goodAt(a(1), now) != nil)
	}
	if p.goodAt(a(3), now.Add(3*time.Second+knownTTL)) != nil {
		t.Error("an address is good past knownTTL")
	}
}

// Addresses past the table are not fresh: an attacker with more addresses
// than it holds cannot have each of them draw on the reserve.
func TestGuardAddressPastTheTableIsNotFresh(t *testing.T) {
	f := newFake()
	g := NewGuard(f)
	g.peers = newPeers(maxGoodPeers, 3, goodPeerBudget)
	clock := time.Unix(1_000_000, 0)
	g.now = func() time.Time { return clock }
	for i := range reviewBurst { // fills the table, then spends the shared limit
		if code := serveFrom(t, g, fmt.Sprintf("10.0.0.%d:1", i%3), fmt.Sprint("junk-", i)); code != http.StatusUnauthorized {
			t.Fatalf("junk %d: status %d, want 401", i, code)
		}
	}
	if code := serveFrom(t, g, scraperAddr, "scraper-token"); code != http.StatusTooManyRequests {
		t.Errorf("a new address with the table full: status %d, want 429 (the reserve is for addresses it can remember)", code)
	}
	clock = clock.Add(suspectTTL)
	for i := range reviewBurst { // the three expired; one new address spends the shared limit
		serveFrom(t, g, "10.0.1.1:1", fmt.Sprint("junk-again-", i))
	}
	if code := serveFrom(t, g, scraperAddr, "scraper-token"); code != http.StatusOK {
		t.Errorf("once the suspects expired: status %d, want 200 from the reserve", code)
	}
}

// An apiserver error says nothing about the caller: a fresh address whose
// review from the reserve failed keeps its one review.
func TestGuardErrorGivesTheReserveBack(t *testing.T) {
	f := newFake()
	g := NewGuard(f)
	clock := time.Unix(1_000_000, 0)
	g.now = func() time.Time { return clock }
	for i := range 2 * reviewBurst {
		serveFrom(t, g, "10.0.0.1:1", fmt.Sprint("junk-", i))
	}
	f.err = errors.New("timeout")
	if code := serveFrom(t, g, scraperAddr, "scraper-token"); code != http.StatusInternalServerError {
		t.Fatalf("apiserver down: status %d, want 500", code)
	}
	f.err = nil
	if code := serveFrom(t, g, scraperAddr, "scraper-token"); code != http.StatusOK {
		t.Errorf("apiserver back, shared limit still spent: status %d, want 200 from the reserve", code)
	}
}
