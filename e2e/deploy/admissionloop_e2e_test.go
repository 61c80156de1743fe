//go:build e2e

package deploy

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/e2e/images"
)

// admissionLoop keeps admissions flowing through the webhook: every period
// it creates a Deployment (no replicas) that reads ConfigMap cfg in a
// labelled namespace, checks that the created object came back stamped
// (the stamp is the webhook's answer to that very request), and deletes the
// one before it.
type admissionLoop struct {
	mu sync.Mutex
	// Creates counts the Deployments created; Unstamped those that came
	// back without a stamp; Errors the failed writes.
	Creates, Unstamped int
	Errors             []error

	stop context.CancelFunc
	done chan struct{}
}

// startAdmissionLoop starts the loop; Stop ends it and returns once the
// last write has returned.
func startAdmissionLoop(ctx context.Context, c client.Client, ns, cfg string, period time.Duration) *admissionLoop {
	ctx, cancel := context.WithCancel(ctx)
	l := &admissionLoop{stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		var previous *appsv1.Deployment
		tick := time.NewTicker(period)
		defer tick.Stop()
		for i := 0; ; i++ {
			d := probeDeployment(ns, fmt.Sprintf("probe-%d", i), cfg)
			err := c.Create(ctx, d)
			if ctx.Err() != nil {
				return
			}
			l.record(d, err)
			if err == nil {
				if previous != nil {
					if err := c.Delete(ctx, previous); err != nil && ctx.Err() == nil {
						l.record(nil, fmt.Errorf("deleting %s: %w", previous.Name, err))
					}
				}
				previous = d
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return l
}

func (l *admissionLoop) record(created *appsv1.Deployment, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.Errors = append(l.Errors, err)
		return
	}
	l.Creates++
	if stamp, serr := framework.TemplateStamp(created); serr != nil || stamp == "" {
		l.Unstamped++
	}
}

// Stop ends the loop.
func (l *admissionLoop) Stop() {
	l.stop()
	<-l.done
}

func probeDeployment(ns, name, cfg string) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "app", Image: images.SampleApp().Ref,
					EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cfg}}}}}},
			}},
		},
	}
}
