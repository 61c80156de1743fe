package framework

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// inClusterRunner drives the confighash Deployment installed in a real
// cluster (kind) by scaling it. Extra flags cannot be passed there; specs
// that need them skip on such clusters.
type inClusterRunner struct {
	c client.Client
}

// Replicas is what the manifests deploy.
const inClusterReplicas = 2

func (r *inClusterRunner) WebhookURL() string { return "" }

func (r *inClusterRunner) Start(ctx context.Context, extraArgs ...string) error {
	if len(extraArgs) > 0 {
		return fmt.Errorf("in-cluster confighash cannot take flags %v", extraArgs)
	}
	return r.scale(ctx, inClusterReplicas)
}

func (r *inClusterRunner) Stop(ctx context.Context) error { return r.scale(ctx, 0) }

func (r *inClusterRunner) scale(ctx context.Context, n int32) error {
	d := &appsv1.Deployment{}
	key := client.ObjectKey{Namespace: Namespace, Name: "confighash"}
	if err := r.c.Get(ctx, key, d); err != nil {
		return fmt.Errorf("reading confighash deployment: %w", err)
	}
	patch := client.MergeFrom(d.DeepCopy())
	d.Spec.Replicas = &n
	if err := r.c.Patch(ctx, d, patch); err != nil {
		return fmt.Errorf("scaling confighash to %d: %w", n, err)
	}
	return wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := r.c.Get(ctx, key, d); err != nil {
			return false, err
		}
		return d.Status.ReadyReplicas == n && d.Status.Replicas == n, nil
	})
}
