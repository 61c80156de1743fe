package webhook

import (
	"net/http"
	"strconv"
	"time"
)

// Limit defaults.
const (
	// DefaultMaxInFlight is how many requests the endpoint handles at once.
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

// Limits bound the memory and time any caller can make the webhook spend,
// before the request body is read. Zero fields take the defaults.
type Limits struct {
	MaxInFlight  int
	MaxBodyBytes int64
	ReadTimeout  time.Duration
	QueueWait    time.Duration
	// Metrics, when set, counts the requests turned away.
	Metrics *Metrics
}

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
	return l
}

// Wrap applies the limits in front of next. A request over the body limit is
// refused by its declared length without being read; one that finds every
// slot taken for QueueWait gets 503 without being read either. Neither is a
// denial: the apiserver treats a failed call under failurePolicy Ignore as
// "no opinion" and the write goes through unstamped.
func (l Limits) Wrap(next http.Handler) http.Handler {
	l = l.withDefaults()
	slots := make(chan struct{}, l.MaxInFlight)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > l.MaxBodyBytes {
			l.Metrics.refused(refusedTooLarge)
			http.Error(w, "request body too large", http.StatusRequestEntityTooLarge)
			return
		}
		// The deadline counts from arrival, so time spent queueing is part
		// of it. A writer that does not support deadlines (a test
		// recorder) has no connection to hold open, so the error is moot.
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(l.ReadTimeout))
		wait := time.NewTimer(l.QueueWait)
		defer wait.Stop()
		select {
		case slots <- struct{}{}:
			defer func() { <-slots }()
		case <-wait.C:
			l.Metrics.refused(refusedBusy)
			w.Header().Set("Retry-After", strconv.Itoa(1))
			http.Error(w, "too many requests in flight", http.StatusServiceUnavailable)
			return
		case <-r.Context().Done():
			return
		}
		// Chunked bodies declare no length; cut them off at the limit too.
		r.Body = http.MaxBytesReader(w, r.Body, l.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}
