package restamp

import (
	"time"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/waves"
)

// planKey names the plan of one source's changes in one namespace. There
// is one plan per key at a time: a newer content replaces the plan of the
// older one, whose waiting readers then go straight to the newer content.
type planKey struct {
	namespace string
	source    string
}

// plan is the waves of one change: its readers, in the order the waves take
// them, and how far each has gone.
type plan struct {
	key     planKey
	change  contract.Change
	members []Request // sorted as waves.Plan sorts them
	// index is each member's place in members.
	index map[Request]int
	// gone are the members re-stamped for the change, done those whose
	// rollout succeeded (or was released by hand).
	gone, done map[Request]bool
	// halt is set when a member's rollout failed: the change goes to no
	// further member.
	halt *planHalt
	// finished is when every member had succeeded or settled; zero
	// while the waves go.
	finished time.Time
	// unchecked are the members planning did not check for staleness
	// (beyond planChecks of them, in the waves' order): each is checked by
	// its own reconcile, and settled there if current. The time is when
	// one was last woken for that by a later wave waiting on it; zero:
	// never.
	unchecked map[Request]time.Time
}

// planHalt says which member halted a plan, and why.
type planHalt struct {
	by     Request
	reason string
}

// flight is a reader re-stamped for one or more plans whose rollout is
// being judged; it counts against --max-concurrent-rollouts until it ends.
type flight struct {
	// since is when the reader was first re-stamped while in flight: a
	// re-stamp of a reader in flight does not restart the clock of
	// --rollout-timeout, so re-stamping a rollout that never ends cannot
	// keep its slot for ever.
	since time.Time
	// light: its re-stamp starts no pod; it takes no slot of the bound.
	light bool
	// judged is when its rollout was last looked at (zero: never).
	judged time.Time
	// stamp is the stamp written, which the new revision's pods carry.
	stamp string
	plans []*plan
	// before is what its plans recorded of the reader before the admit
	// that made this flight, which abort puts back.
	before []membership
	// prev is the rollout that was going when this flight was admitted:
	// abort puts it back. nil once this flight's re-stamp is written.
	prev *flight
}

// membership is what one plan records of one reader.
type membership struct {
	pl         *plan
	gone, done bool
}

// restore puts m back into its plan for r.
func (m membership) restore(r Request) {
	setOrDelete(m.pl.gone, r, m.gone)
	setOrDelete(m.pl.done, r, m.done)
}

func setOrDelete(set map[Request]bool, r Request, on bool) {
	if on {
		set[r] = true
	} else {
		delete(set, r)
	}
}

// planner keeps the waves of every change in progress. It is the leader's
// memory only: everything in it can be rebuilt from the objects (the
// readers' contract.RolloutAnnotation and contract.HaltAnnotation), which is

// member is a reader of a change as the plan is built: its place in the
// order, and what its own metadata says it has gone through.
type member struct {
	req   Request
	order int
	// gone: its contract.RolloutAnnotation names the change; halted: its
	// contract.HaltAnnotation does; released: a user released that halt.
	gone, halted, released bool
	// since is when it was re-stamped for the change (from the annotation).
	since  time.Time
	reason string
	// unchecked: planning did not check whether it is stale for the
	// change (plan.unchecked).
	unchecked bool
	// later: its window was closed, or a freeze held it, when the plan
	// was made (waves.Member.Later; wave_window.go).
	later bool
}

func memberOf(r Request, order int) waves.Member {
	return waves.Member{KindName: r.KindName, Namespace: r.Namespace, Name: r.Name, Order: order}
}

// wave is m as the waves order it.
func (m member) wave() waves.Member {
	w := memberOf(m.req, m.order)
	w.Later = m.later
	return w
}

// admission is the planner's answer to a reader that is due a re-stamp.
type admission int

const (
	// admitted: re-stamp it now; it is in flight from now on.
	admitted admission = iota
	// waitWave: an earlier wave of one of its plans has not succeeded yet.
	waitWave
	// waitBound: its waves are due, but --max-concurrent-rollouts are in
	// progress.
	waitBound
	// waitHalt: one of its plans is halted.
	waitHalt
)

// has reports whether r is a member of pl.
func (pl *plan) has(r Request) bool {
	_, ok := pl.index[r]
	return ok
}

// due reports whether r's wave may go: every member of every earlier wave
// has succeeded. A reader that is not a member (it began to read the source
// after the plan was made) is due at once.
func (pl *plan) due(r Request, maxWave int) bool {
	for _, m := range pl.members[:pl.waveStart(r, maxWave)] {
		if !pl.done[m] {
			return false
		}
	}
	return true
}

// waveStart is the index in members of the first member of r's wave (0
// for a reader that is not a member).
func (pl *plan) waveStart(r Request, maxWave int) int {
	i, ok := pl.index[r]
	if !ok {
		return 0
	}
	start := 0
	for _, size := range waves.Sizes(i+1, maxWave) {
		if start+size > i {
			break
		}
		start += size
	}
	return start
}

// uncheckedBefore lists, as re-checks, the members of the waves before r's
// that planning did not check and that have not asked (waiting), at most
// once per staleJudgement each: r waits on them, and their own reconcile
// settles one that is current.
func (pl *plan) uncheckedBefore(r Request, maxWave int, waiting map[Request]Request, now time.Time) []Request {
	if len(pl.unchecked) == 0 {
		return nil
	}
	var rs []Request
	for _, m := range pl.members[:pl.waveStart(r, maxWave)] {
		last, ok := pl.unchecked[m]
		if _, asked := waiting[m]; !ok || asked || pl.gone[m] || pl.done[m] || (!last.IsZero() && now.Sub(last) <= staleJudgement) {
			continue
		}
		pl.unchecked[m] = now
		m.Recheck = true
		rs = append(rs, m)
	}
	return rs
}

// dueMembers lists the members not gone nor settled whose wave may go
// now, of those that asked and were told to wait (waiting): a member that
// has not asked yet comes with its own event, and waking it would turn
// what may be a replay into a live change.
func (pl *plan) dueMembers(maxWave int, waiting map[Request]Request) []Request {
	if pl.halt != nil {
		return nil
	}
	var due []Request
	for _, m := range pl.members {
		if _, asked := waiting[m]; asked && !pl.gone[m] && !pl.done[m] && pl.due(m, maxWave) {
			due = append(due, m)
		}
	}
	return due
}
