package app

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/confighash/confighash/internal/restamp"
	"github.com/confighash/confighash/internal/workload"
)

// addHook wires the config-update hook; the manager runs it on the leader.
func addHook(ctx context.Context, mgr manager.Manager, reg prometheus.Registerer, key []byte, kinds workload.Registry, probe restamp.Probe, o Options) error {
	return restamp.Setup(ctx, mgr, restamp.Config{
		Options: o.Hook,
		Kinds:   kinds,
		Probe:   probe,
		Metrics: reg,
		Key:     key,
		// The webhook's policy: never kube-system nor our own namespace.
		Policy:        o.policy(),
		MaxSourceKeys: o.MaxSourceKeys,
		Self:          o.self(),
	})
}

// self is confighash's own pod, or nil when --pod-name is not set.
func (o Options) self() *corev1.ObjectReference {
	if o.PodName == "" {
		return nil
	}
	return &corev1.ObjectReference{APIVersion: "v1", Kind: "Pod", Namespace: o.Namespace, Name: o.PodName, UID: types.UID(o.PodUID)}
}
