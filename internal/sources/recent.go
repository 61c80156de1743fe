package sources

import (
	"context"
	"fmt"
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
func (r *RecentReads) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	kind, ok := recentKind(obj)
	if !ok {
		return r.Reader.Get(ctx, key, obj, opts...)
	}
	k := recentKey{kind, key.Namespace, key.Name}
	if held, ok := r.m.get(k); ok && !held.sent.Before(freshSince(ctx)) {
		switch {
		case held.obj != nil:
			return copyInto(held.obj, obj)
		case preferLive(ctx):
			// Sent since the caller began: as good as its own GET.
			return apierrors.NewNotFound(corev1.Resource(kind), key.Name)
		}
		return rememberedMiss{apierrors.NewNotFound(corev1.Resource(kind), key.Name)}
	}
	sent := r.m.now()
	err := r.Reader.Get(ctx, key, obj, opts...)
	switch {
	case apierrors.IsNotFound(err):
		r.m.add(k, recentRead{nil, sent}, 1)
	case err == nil:
		keep, w, err := trimmed(r.Slimmer, obj)
		if err != nil {
			return err
		}
		r.m.add(k, recentRead{keep, sent}, w)
		// Hand back what is remembered, slimmed: Reader would slim (hash)
		// the whole object a second time otherwise.
		return copyInto(keep, obj)
	}
	return err
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
