package injection

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Getter reads one object; a client.Reader or a cache is one.
type Getter interface {
	Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error
}

// Check reads namespace name through r and decides. An excluded namespace
// is decided by its name, with no read; a namespace that does not exist is
// not served. err is set only when the namespace could not be read, and the
// Decision then serves nothing.
func (p Policy) Check(ctx context.Context, r Getter, name string) (Decision, error) {
	d, _, err := p.CheckNamespace(ctx, r, name)
	return d, err
}

// CheckLabels is Check that also returns the labels it read (nil when it
// read none), for a caller that decides more from them (pinning).
func (p Policy) CheckLabels(ctx context.Context, r Getter, name string) (Decision, map[string]string, error) {
	d, ns, err := p.CheckNamespace(ctx, r, name)
	if ns == nil {
		return d, nil, err
	}
	return d, ns.Labels, err
}

// CheckNamespace is Check that also returns the namespace it read (nil
// when it read none), for a caller that decides more from its labels
// (pinning) or annotations (rollout windows and freezes).
func (p Policy) CheckNamespace(ctx context.Context, r Getter, name string) (Decision, *corev1.Namespace, error) {
	if p.Excluded(name) {
		return p.Decide(name, nil), nil, nil
	}
	ns := &corev1.Namespace{}
	err := r.Get(ctx, client.ObjectKey{Name: name}, ns)
	if apierrors.IsNotFound(err) {
		return Decision{Reason: fmt.Sprintf("namespace %s does not exist", name)}, nil, nil
	}
	if err != nil {
		return Decision{Reason: fmt.Sprintf("cannot read namespace %s", name)}, nil, fmt.Errorf("reading namespace %s: %w", name, err)
	}
	return p.Decide(name, ns.Labels), ns, nil
}

// CacheThenLive reads a namespace from Cache and, when the cache does not
// have it, once from Live. The webhook uses it: a namespace created a moment
// before its first workload may not have reached the cache yet, and the
// apiserver, which matched the namespaceSelector, already knows it.
type CacheThenLive struct {
	Cache Getter
	Live  Getter
}

// Get implements Getter.
func (c CacheThenLive) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.Cache.Get(ctx, key, obj, opts...)
	if apierrors.IsNotFound(err) && c.Live != nil {
		return c.Live.Get(ctx, key, obj, opts...)
	}
	return err
}
