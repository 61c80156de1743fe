package metricsauth

import (
	"net"
	"net/netip"
	"time"

	"golang.org/x/time/rate"
)

// peerOf returns the caller's address from r.RemoteAddr, the TCP peer: a
// header could be forged, a peer address cannot without completing the
// handshake. An unparsable one is the zero Addr, one address for all such
// callers.
func peerOf(remoteAddr string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remoteAddr); err == nil {
		return ap.Addr().Unmap()
	}
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap()
	}
	return netip.Addr{}
}

// goodPeer is an address a token the apiserver allowed came from. It has a
// budget of its own for new tokens, so a scraper whose token rotated (a new
// token from the same pod) is reviewed whatever other addresses send.
type goodPeer struct {
	until   time.Time
	reviews *rate.Limiter
}

// peers tells a caller's address apart by what its tokens did: good (one
// was allowed within knownTTL), suspect (one was denied within suspectTTL,
// and none allowed since), or fresh (neither). Both tables are bounded; an
// address that finds no room is treated as suspect, never as fresh, so
// more addresses than the table holds cannot launder their failures. Not
// safe for concurrent use: Guard locks around it.
type peers struct {
	good       map[netip.Addr]*goodPeer
	suspect    map[netip.Addr]time.Time // until
	maxGood    int
	maxSuspect int
	// budget makes a new good address's budget.
	budget func() *rate.Limiter
	// swept is when suspect was last scanned for expired entries: at most
	// once a second, so a flood from new addresses into a full table costs
	// a scan a second, not one a request.
	swept time.Time
}

func newPeers(maxGood, maxSuspect int, budget func() *rate.Limiter) *peers {
	return &peers{
		good:       map[netip.Addr]*goodPeer{},
		suspect:    map[netip.Addr]time.Time{},
		maxGood:    maxGood,
		maxSuspect: maxSuspect,
		budget:     budget,
	}
}

// goodAt returns a's entry if a is good at now.
func (p *peers) goodAt(a netip.Addr, now time.Time) *goodPeer {
	gp, ok := p.good[a]
	if !ok {
		return nil
	}
	if !now.Before(gp.until) {
		delete(p.good, a)
		return nil
	}
	return gp
}

// suspectAt reports whether a is suspect at now.
func (p *peers) suspectAt(a netip.Addr, now time.Time) bool {
	until, ok := p.suspect[a]
	if !ok {
		return false
	}
	if !now.Before(until) {
		delete(p.suspect, a)
		return false
	}
	return true
}

// allowed records that a token from a was allowed: a is good for knownTTL,
// keeping the budget it has if it already was, and no longer suspect. A
// full table first drops expired entries, then the one expiring soonest.
func (p *peers) allowed(a netip.Addr, now time.Time) {
	delete(p.suspect, a)
	if gp := p.goodAt(a, now); gp != nil {
		gp.until = now.Add(knownTTL)
		return
	}
	makeRoom(p.good, p.maxGood, func(gp *goodPeer) time.Time { return gp.until }, now)
	p.good[a] = &goodPeer{until: now.Add(knownTTL), reviews: p.budget()}
}

// denied records that a token from a was denied (or is being reviewed on
// a's one fresh chance): a is suspect for suspectTTL. It returns false when
// the table has no room, and a is then not recorded.
func (p *peers) denied(a netip.Addr, now time.Time) bool {
	if _, ok := p.suspect[a]; !ok && !p.roomAt(now) {
		return false
	}
	p.suspect[a] = now.Add(suspectTTL)
	return true
}

// forget undoes denied for a review that got no answer: an apiserver error
// says nothing about the caller.
func (p *peers) forget(a netip.Addr) { delete(p.suspect, a) }

// roomAt reports whether a new address can be recorded as suspect at now.
func (p *peers) roomAt(now time.Time) bool {
	if len(p.suspect) < p.maxSuspect {
		return true
	}
	if now.Sub(p.swept) < time.Second {
		return false
	}
	p.swept = now
	for k, until := range p.suspect {
		if !now.Before(until) {
			delete(p.suspect, k)
		}
	}
	return len(p.suspect) < p.maxSuspect
}
