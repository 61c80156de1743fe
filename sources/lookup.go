package sources

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
)

// Reader looks sources up for the hasher.
//
// It reads the slimmed informer cache. A cache miss is not trusted on its
// own: a ConfigMap applied a moment before the Deployment that reads it (one
// `kubectl apply -f dir/`) may not have reached the informer when the
// Deployment is admitted. So a miss is confirmed with one live GET, when Live
// is set. Misses are rare (a missing source is an error state), so this adds
// no API load in steady state. Content that changed but is still stale in
// the cache is not detected here; the hook's watch on that source corrects
// the stamp moments later.
type Reader struct {
	Cache client.Reader
	// Live, when set, confirms cache misses. The hook leaves it nil: its
	// events come from the same cache, which is current for the source that
	// changed.
	Live client.Reader
}

// Lookup returns a hasher.Lookup for sources in namespace.
func (r Reader) Lookup(ctx context.Context, namespace string) hasher.Lookup {
	return func(s hasher.Source) (hasher.Content, bool, error) {
		key := client.ObjectKey{Namespace: namespace, Name: s.Name}
		obj, err := newObject(s.Kind)
		if err != nil {
			return hasher.Content{}, false, err
		}
		err = r.Cache.Get(ctx, key, obj)
		if apierrors.IsNotFound(err) && r.Live != nil {
			err = r.Live.Get(ctx, key, obj)
			if err == nil {
				var slim any
				if slim, err = Slim(obj); err == nil {
					obj = slim.(client.Object)
				}
			}
		}
		switch {
		case apierrors.IsNotFound(err):
			return hasher.Content{}, false, nil
		case err != nil:
			return hasher.Content{}, false, fmt.Errorf("reading %s in %s: %w", s, namespace, err)
		case obj.GetDeletionTimestamp() != nil:
			// Being deleted: pods started from now on will not find it.
			return hasher.Content{}, false, nil
		}
		c, err := Content(obj)
		return c, err == nil, err
	}
}

func newObject(k hasher.Kind) (client.Object, error) {
	switch k {
	case hasher.ConfigMap:
		return &corev1.ConfigMap{}, nil
	case hasher.Secret:
		return &corev1.Secret{}, nil
	}
	return nil, fmt.Errorf("unknown source kind %q", k)
}
