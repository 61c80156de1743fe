package metricsauth

import (
	"net/netip"
	"time"

	"golang.org/x/time/rate"
)

// A token that is not known good is reviewed from one budget, chosen by
// its caller's address, so that a flood of junk tokens spends the budget of
// the addresses sending it and not the scraper's:
//   - an address a token was allowed from within knownTTL (a scraper whose
//     token just rotated) spends a small budget of its own and nothing else;
//   - any other address spends the shared limit, reviewsPerSecond;
//   - an address not suspect (no token of it denied within suspectTTL)
//     that finds the shared limit spent gets one review from a reserve
//     only such addresses draw from, and is suspect from then until a
//     token of it is allowed.
//
// So a flood from A addresses takes A reviews of the reserve, one each, and
// then only the shared limit, as long as that denies each address again
// within suspectTTL (A up to reviewsPerSecond*suspectTTL, 1500); a new
// scraper waits at most for those A. Unknown tokens cost the apiserver at
// most reviewsPerSecond + freshReviewsPerSecond +
// maxGoodPeers/goodPeerReviewEvery a second.
const (
	freshReviewsPerSecond = 5
	freshReviewBurst      = 5
	// A good address's own budget: a rotation needs one review; a few
	// allow for a pod with several scrapers.
	goodPeerReviewEvery = 20 * time.Second
	goodPeerReviewBurst = 3
	// maxGoodPeers bounds good addresses; only an allowed token makes one,
	// so it bounds the good budgets' total too.
	maxGoodPeers = 64
	// maxSuspectPeers bounds suspect addresses: about what the budgets can
	// deny within suspectTTL. Past it a new address is treated as suspect,
	// so more addresses than it holds cannot each draw on the reserve.
	maxSuspectPeers = 4096
	// suspectTTL is how long a denial keeps an address from the reserve.
	// A flooding address is denied again long before it ends; a scraper
	// whose token failed once gets the reserve back after it.
	suspectTTL = 5 * time.Minute
)

// admission is whether a review of a token that is not known good may go
// ahead.
type admission struct {
	ok bool
	// fresh is set when the review spends the address's one review from
	// the reserve; an apiserver error gives it back.
	fresh bool
}

// admit chooses the budget a review from peer spends at now. Guard's lock
// is held.
func (g *Guard) admit(peer netip.Addr, now time.Time) admission {
	if gp := g.peers.goodAt(peer, now); gp != nil {
		return admission{ok: gp.reviews.AllowN(now, 1)}
	}
	if g.reviews.AllowN(now, 1) {
		return admission{ok: true}
	}
	if g.peers.suspectAt(peer, now) || !g.peers.denied(peer, now) {
		return admission{}
	}
	if !g.fresh.AllowN(now, 1) {
		g.peers.forget(peer)
		return admission{}
	}
	return admission{ok: true, fresh: true}
}

// goodPeerBudget is the budget a new good address starts with.
func goodPeerBudget() *rate.Limiter {
	return rate.NewLimiter(rate.Every(goodPeerReviewEvery), goodPeerReviewBurst)
}
