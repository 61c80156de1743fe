package webhook

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Limit defaults.
const (
	// DefaultMaxInFlight is how many requests the endpoint handles at once,
	// each from the moment its whole body has arrived until it is answered.
	// One admission of an ordinary workload takes well under a millisecond,
	// so 8 serve thousands a second; the bound is for the large ones. An
	// UPDATE near the body limit costs about 5x its size in heap while it is
	// decoded (the body, the review's two raw objects, two typed objects),
	// so 8 of them stay within about 300 MiB, inside the 512 Mi the
	// manifests give the container.
	DefaultMaxInFlight = 8
	// DefaultMaxBodyBytes is the largest review the apiserver can send. It
	// accepts write bodies up to 3 MiB (twice etcd's 1.5 MiB object limit,
	// since JSON is larger than the stored protobuf), an UPDATE review
	// carries the object and the old object, and the rest of the request is
	// well under 1 MiB: 7 MiB, the same figure controller-runtime settled on.
	DefaultMaxBodyBytes = 7 << 20
	// DefaultReadTimeout is the time a request has to arrive in full. The
	// apiserver gives up on the call after TimeoutSeconds, so a body still
	// trickling in by then serves no one.
	DefaultReadTimeout = TimeoutSeconds * time.Second
	// DefaultQueueWait is how long a request waits for a free slot before
	// it is turned away, short of the apiserver's timeout so that it gets a
	// prompt failure (and, with failurePolicy Ignore, admits the write)
	// rather than waiting the call out.
	DefaultQueueWait = 2 * time.Second
)

// Limits bound the memory and time any caller can make the webhook spend.
// Zero fields take the defaults. Only MaxInFlight is an operator's setting,
// and in production it comes set from validated Options (Options.Limits);
// the other fields are fixed, and the defaults are where they are fixed.
type Limits struct {
	// MaxInFlight bounds the requests handled at once: a slot is taken
	// for the work only, once the whole body has arrived.
	MaxInFlight  int
	MaxBodyBytes int64
	ReadTimeout  time.Duration
	QueueWait    time.Duration
	// MaxBufferedBytes bounds the bytes of request bodies held at once,
	// by declared length, arrived or arriving, of requests not yet
	// answered; MaxBufferedPerAddress bounds those of one source address.
	// Both are raised to MaxBodyBytes if set lower, so that one body
	// always fits.
	MaxBufferedBytes      int64
	MaxBufferedPerAddress int64
	// Metrics, when set, counts the requests turned away.
	Metrics *Metrics
}

// Buffer defaults.
const (
	// DefaultMaxBufferedBytes is nine bodies at the body limit. The work
	// of MaxInFlight requests costs about 4x their body beyond the body
	// itself (see DefaultMaxInFlight), so the endpoint's heap stays under
	// 8 * 4 * 7 + 64 = 288 MiB whatever callers send.
	DefaultMaxBufferedBytes = 64 << 20
	// DefaultMaxBufferedPerAddress is two bodies at the body limit and
	// some: one address, the apiserver's included, cannot hold more than
	// a quarter of the budget, so three others can still be read in full.
	DefaultMaxBufferedPerAddress = 16 << 20
)

func (l Limits) withDefaults() Limits {
	if l.MaxInFlight <= 0 {
		l.MaxInFlight = DefaultMaxInFlight
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = DefaultReadTimeout
	}
	if l.QueueWait <= 0 {
		l.QueueWait = DefaultQueueWait
	}
	if l.MaxBufferedBytes <= 0 {
		l.MaxBufferedBytes = DefaultMaxBufferedBytes
	}
	if l.MaxBufferedPerAddress <= 0 {
		l.MaxBufferedPerAddress = DefaultMaxBufferedPerAddress
	}
	// One body at the limit, plus the byte that shows its end, must fit.
	l.MaxBufferedPerAddress = max(l.MaxBufferedPerAddress, l.MaxBodyBytes+1)
	l.MaxBufferedBytes = max(l.MaxBufferedBytes, l.MaxBufferedPerAddress)
	return l
}

// forOthers is l for the callers Callers does not accept: their answer is
// fixed, so they get one slot and room for one body at the limit (raised to
// that by withDefaults), apart from the apiserver's.
func (l Limits) forOthers() Limits {
	l.MaxInFlight = 1
	l.MaxBufferedBytes, l.MaxBufferedPerAddress = 1, 1
	return l
}

// Wrap applies the limits in front of next, in this order:
//
//   - a request declared over the body limit is refused unread (413);
//   - the request takes room for its declared length from the buffer
//     budget (503 when there is none before the read timeout), and its
//     body is read in full, within the read timeout, without a slot: a
//     caller that trickles its body holds a goroutine and its room, never
//     a slot (408 when it does not arrive in time, 413 over the limit);
//   - the request then waits up to QueueWait for a slot (503 if none),
//     slots going round the namespaces with requests waiting (slots.go;
//     the namespace read from the start of the body, reviewnamespace.go,
//     only when the request has to wait);
//   - next handles it, and the body's buffer is given back when it answers.
//
// No refusal is a denial: the apiserver treats a failed call under
// failurePolicy Ignore as "no opinion" and the write goes through unstamped.
func (l Limits) Wrap(next http.Handler) http.Handler {
	l = l.withDefaults()
	bufs := newBuffers(l.MaxBufferedBytes, l.MaxBufferedPerAddress)
	return l.wrap(next, newSlots(l.MaxInFlight), bufs)
}

func (l Limits) wrap(next http.Handler, slots *slots, bufs *buffers) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > l.MaxBodyBytes {
			l.Metrics.refused(refusedTooLarge)
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		// The deadline counts from arrival, so the wait for buffer room is
		// part of it. A writer that does not support deadlines (a test
		// recorder) has no connection to hold open, so the error is moot.
		arrived := time.Now()
		_ = http.NewResponseController(w).SetReadDeadline(arrived.Add(l.ReadTimeout))
		ctx, cancel := context.WithDeadline(r.Context(), arrived.Add(l.ReadTimeout))
		addr := sourceAddress(r.RemoteAddr)
		// Room for the declared length and the byte that shows the end;
		// chunked bodies declare none, so they take the limit, and are
		// cut off there.
		size := l.MaxBodyBytes
		if r.ContentLength >= 0 {
			size = r.ContentLength
		}
		chunks, held, err := bufs.readBody(ctx, addr, http.MaxBytesReader(w, r.Body, l.MaxBodyBytes), size+1)
		cancel()
		defer bufs.give(addr, held)
		if err != nil {
			l.refuseBody(w, err)
			return
		}
		give, err := slots.take(r.Context(), func() string { return reviewNamespace(chunks) }, l.QueueWait)
		switch {
		case errors.Is(err, errNoSlot):
			l.Metrics.refused(refusedBusy)
			w.Header().Set("Retry-After", strconv.Itoa(1))
			http.Error(w, "too many requests in flight", http.StatusServiceUnavailable)
			return
		case err != nil:
			return
		}
		defer give()
		r.Body = chunksReader(chunks)
		next.ServeHTTP(w, r)
	})
}

// refuseBody answers a request whose body could not be read in full.
func (l Limits) refuseBody(w http.ResponseWriter, err error) {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		l.Metrics.refused(refusedTooLarge)
		http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
	case errors.Is(err, errNoBuffer):
		l.Metrics.refused(refusedNoBuffer)
		w.Header().Set("Retry-After", strconv.Itoa(1))
		http.Error(w, "too many request bodies buffered", http.StatusServiceUnavailable)
	default:
		l.Metrics.refused(refusedIncomplete)
		http.Error(w, "request body incomplete", http.StatusRequestTimeout)
	}
}

// sourceAddress is the IP a request came from, the key of the per-address
// bounds; the port differs per connection, so it is dropped.
func sourceAddress(remote string) string {
	if host, _, err := net.SplitHostPort(remote); err == nil {
		return host
	}
	return remote
}
