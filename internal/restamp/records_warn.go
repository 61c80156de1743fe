package restamp

import (
	"context"
	"errors"
	"hash/fnv"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/internal/contract"
)

// maxRecordWarnings bounds how many bad records recordWarnings remembers.
const maxRecordWarnings = 4096

// recordWarnings reports each bad record once, with a log line and an
// InvalidAnnotation Event on its workload, rather than on every reconcile
// that reads it: it remembers the workload, the annotation and a
// fingerprint of the value, so a new value is reported again. When full it
// forgets everything, so a bad record still there is reported once more
// then. The zero value is ready to use.
type recordWarnings struct {
	mu   sync.Mutex
	seen map[recordWarning]struct{}
}

type recordWarning struct {
	uid        types.UID
	annotation string
	length     int
	sum        uint64
}

// fingerprintLen is how much of a value the fingerprint reads: a record's
// head says what it is, and its length tells most edits apart.
const fingerprintLen = 4 << 10

// warn reports that obj's annotation, whose value is value, cannot be used
// (err), and what the hook does about it (then), unless it was reported
// already. events may be nil.
func (w *recordWarnings) warn(ctx context.Context, rec events.EventRecorder, obj client.Object, annotation, value string, err error, then string) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(value[:min(len(value), fingerprintLen)]))
	k := recordWarning{uid: obj.GetUID(), annotation: annotation, length: len(value), sum: h.Sum64()}
	w.mu.Lock()
	if _, ok := w.seen[k]; ok {
		w.mu.Unlock()
		return
	}
	if w.seen == nil || len(w.seen) >= maxRecordWarnings {
		w.seen = map[recordWarning]struct{}{}
	}
	w.seen[k] = struct{}{}
	w.mu.Unlock()
	problem := recordProblem(err)
	log.FromContext(ctx).Info("a record on the workload cannot be used; "+then,
		"workload", client.ObjectKeyFromObject(obj).String(), "annotation", annotation, "problem", problem, "bytes", len(value))
	if rec != nil {
		rec.Eventf(obj, nil, corev1.EventTypeWarning, contract.ReasonInvalidAnnotation, "Restamp",
			"%s %s; %s", annotation, problem, then)
	}
}

// recordProblem says what is wrong with a record in a few words, never
// quoting it: a tenant's value does not go into Events or logs.
func recordProblem(err error) string {
	switch {
	case errors.Is(err, contract.ErrRecordTooLong):
		return "is too long to be confighash's"
	case errors.Is(err, contract.ErrRecordUnsealed):
		return "is not sealed by confighash (written by hand, or before records were sealed)"
	case errors.Is(err, contract.ErrRecordForged):
		return "does not verify for this workload (copied from another workload, edited, or sealed under an earlier key)"
	case errors.Is(err, contract.ErrRecordFuture):
		return "is dated in the future"
	}
	return "cannot be read"
}
