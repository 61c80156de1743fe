package sources

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// DefaultRecentWeight bounds RecentReads' memory, in entries plus the keys
// of the sources held: a slimmed key costs about 150 bytes, so 32768 stay
// within about 5 MiB whatever callers name.
const DefaultRecentWeight = 32768

// RecentReads is a client.Reader in front of a live reader that remembers,
// for as briefly as Misses remembers a miss (DefaultMissTTL), what each GET
// of a ConfigMap, Secret or Namespace found: the object, or that it does not
// exist. Repeated admissions naming what the informer cache does not hold
// (a Helm release Secret left out of the watch, a source or namespace
// created a moment ago, or names a caller invents) then cost one GET per
// name and TTL, not one per admission.
//
// It holds what the checksum and the namespace policy need and nothing
// more: ConfigMaps and Secrets slimmed (digests, never values), Namespaces
// with their name, labels and lifecycle. Other objects, lists and errors
// other than NotFound pass through unremembered. An answer it gives is at
// most the TTL older than a GET would be; under PreferLive it is one to a
// GET sent since the caller began, or a GET now. A remembered NotFound says
// so (rememberedMiss), and Reader.Lookup stamps no absence from it.
type RecentReads struct {
	client.Reader
	// Slimmer slims what is remembered. Its MaxKeys must be the cache's
	// and Reader's, or a remembered source over DefaultMaxKeys would come
	// back as a placeholder where a fresh GET gives its digests. The zero
	// value applies DefaultMaxKeys.
	Slimmer Slimmer
	m       *memory[recentKey, recentRead]

	mu     sync.Mutex
	flight map[recentKey]*recentCall
}

// recentRead is one GET's answer (nil: not found), and when it was sent.
type recentRead struct {
	obj  client.Object
	sent time.Time
}

type recentKey struct {
	kind            string
	namespace, name string
}

// NewRecentReads remembers live's answers for ttl, within weight (see
// DefaultRecentWeight). now is the clock; nil means time.Now.
func NewRecentReads(live client.Reader, ttl time.Duration, weight int, now func() time.Time) *RecentReads {
	return &RecentReads{Reader: live, m: newMemory[recentKey, recentRead](ttl, weight, now)}
}

// Get answers from memory within the TTL, else from the live reader, and
// remembers the answer. A remembered absence is held as a nil object. Under
// PreferLive only an answer to a GET sent since it began is taken.
// Concurrent callers share one GET in flight if it was sent since they
// began: a wave of Deployments an Argo CD sync applies at once, all reading
// one ConfigMap, costs one read, not one each.
func (r *RecentReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	kind, ok := recentKind(obj)
	if !ok || len(opts) > 0 {
		return r.Reader.Get(ctx, key, obj, opts...)
	}
	k := recentKey{kind, key.Namespace, key.Name}
	since := freshSince(ctx)
	if held, ok := r.m.get(k); ok && !held.sent.Before(since) {
		return r.answer(ctx, held, kind, key, obj, true)
	}
	call, first := r.call(k, since)
	if first {
		r.get(ctx, k, key, obj, call)
	}
	select {
	case <-call.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	if call.err != nil && !apierrors.IsNotFound(call.err) {
		return call.err
	}
	return r.answer(ctx, call.read, kind, key, obj, false)
}

// answer sets obj to what read found. A NotFound from memory says so
// (rememberedMiss), unless the caller reads fresh and the GET was sent
// since it began, which is as good as its own.
func (r *RecentReads) answer(ctx context.Context, read recentRead, kind string, key client.ObjectKey, obj client.Object, fromMemory bool) error {
	if read.obj != nil {
		// What is held is slimmed: Reader would slim (hash) the whole
		// object a second time otherwise.
		return copyInto(read.obj, obj)
	}
	miss := sentMiss{apierrors.NewNotFound(corev1.Resource(kind), key.Name), read.sent}
	if fromMemory && !preferLive(ctx) {
		return rememberedMiss{miss}
	}
	return miss
}

// sentMiss is a NotFound RecentReads answered, with when the GET that
// found it was sent: a caller that shared a GET in flight, or took one from
// memory, asked later than that GET saw.
type sentMiss struct {
	error
	sent time.Time
}

func (e sentMiss) Unwrap() error { return e.error }

// missSentAt is when the GET behind err, a NotFound from RecentReads, was
// sent.
func missSentAt(err error) (time.Time, bool) {
	var m sentMiss
	if errors.As(err, &m) {
		return m.sent, true
	}
	return time.Time{}, false
}

// recentCall is a GET in flight, shared by callers that began before it
// was sent.
type recentCall struct {
	done chan struct{}
	sent time.Time
	read recentRead
	err  error
}

// call returns the GET of k in flight if it was sent at or after since,
// or a new one, which the caller (first) must make.
func (r *RecentReads) call(k recentKey, since time.Time) (c *recentCall, first bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c, ok := r.flight[k]; ok && !c.sent.Before(since) {
		return c, false
	}
	if r.flight == nil {
		r.flight = map[recentKey]*recentCall{}
	}
	c = &recentCall{done: make(chan struct{}), sent: r.m.now()}
	r.flight[k] = c
	return c, true
}

// get makes c's GET under the first caller's ctx (a caller that gives up
// fails the others' reads too, which then keep the cache's answer or the
// stamp), remembers what it found, and ends c.
func (r *RecentReads) get(ctx context.Context, k recentKey, key client.ObjectKey, obj client.Object, c *recentCall) {
	defer func() {
		r.mu.Lock()
		if r.flight[k] == c {
			delete(r.flight, k)
		}
		r.mu.Unlock()
		close(c.done)
	}()
	c.err = r.Reader.Get(ctx, key, obj)
	switch {
	case apierrors.IsNotFound(c.err):
		c.read = recentRead{nil, c.sent}
		r.m.add(k, c.read, 1)
	case c.err == nil:
		keep, w, err := trimmed(r.Slimmer, obj)
		if c.err = err; err == nil {
			c.read = recentRead{keep, c.sent}
			r.m.add(k, c.read, w)
		}
	}
}

func recentKind(obj client.Object) (string, bool) {
	switch obj.(type) {
	case *corev1.ConfigMap:
		return "configmaps", true
	case *corev1.Secret:
		return "secrets", true
	case *corev1.Namespace:
		return "namespaces", true
	}
	return "", false
}

// trimmed is what is remembered of obj, and its weight.
func trimmed(s Slimmer, obj client.Object) (client.Object, int, error) {
	switch o := obj.(type) {
	case *corev1.Namespace:
		keep := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
			Name: o.Name, UID: o.UID, ResourceVersion: o.ResourceVersion, Labels: o.Labels,
			CreationTimestamp: o.CreationTimestamp, DeletionTimestamp: o.DeletionTimestamp,
		}}
		return keep.DeepCopy(), 1 + len(o.Labels), nil
	case *corev1.ConfigMap, *corev1.Secret:
		slim, err := s.Slim(obj)
		if err != nil {
			return nil, 0, err
		}
		// Slim builds a new object, so nothing in it is shared with obj.
		keep := slim.(client.Object)
		w := 1
		switch s := keep.(type) {
		case *corev1.ConfigMap:
			w += len(s.Data) + len(s.BinaryData)
		case *corev1.Secret:
			w += len(s.Data)
		}
		return keep, w, nil
	}
	return nil, 0, fmt.Errorf("%T is not remembered", obj)
}

// copyInto sets obj to a copy of held, which has obj's type.
func copyInto(held, obj client.Object) error {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		held.(*corev1.ConfigMap).DeepCopyInto(o)
	case *corev1.Secret:
		held.(*corev1.Secret).DeepCopyInto(o)
	case *corev1.Namespace:
		held.(*corev1.Namespace).DeepCopyInto(o)
	default:
		return fmt.Errorf("%T is not remembered", obj)
	}
	return nil
}
