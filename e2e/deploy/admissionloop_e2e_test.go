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
// one before it. With a wanted stamp, it also replaces Deployment
// probe-update with its stamp removed, as an apply of a manifest does, and
// every admitted write must come back with exactly that stamp.
type admissionLoop struct {
	mu sync.Mutex
	// Creates counts the Deployments created, Updates the replaces;
	// Unstamped the writes that came back without a stamp, Wrong those
	// with another stamp than the one wanted; Errors the failed writes.
	Creates, Updates, Unstamped, Wrong int
	Errors                             []error

	want string
	stop context.CancelFunc
	done chan struct{}
}

// startAdmissionLoop starts the loop; Stop ends it and returns once the
// last write has returned.
func startAdmissionLoop(ctx context.Context, c client.Client, ns, cfg string, period time.Duration) *admissionLoop {
	return startStampLoop(ctx, c, ns, cfg, period, "")
}

// startStampLoop is startAdmissionLoop that also replaces probe-update
// (which must exist) and wants every admitted write stamped want.
func startStampLoop(ctx context.Context, c client.Client, ns, cfg string, period time.Duration, want string) *admissionLoop {
	ctx, cancel := context.WithCancel(ctx)
	l := &admissionLoop{want: want, stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		var previous *appsv1.Deployment
		tick := time.NewTicker(period)
		defer tick.Stop()
		for i := 0; ; i++ {
			if want != "" {
				d, err := replaceUnstamped(ctx, c, ns)
				if ctx.Err() != nil {
					return
				}
				l.record(d, err, &l.Updates)
			}
			d := probeDeployment(ns, fmt.Sprintf("probe-%d", i), cfg)
			err := c.Create(ctx, d)
			if ctx.Err() != nil {
				return
			}
			l.record(d, err, &l.Creates)
			if err == nil {
				if previous != nil {
					if err := c.Delete(ctx, previous); err != nil && ctx.Err() == nil {
						l.record(nil, fmt.Errorf("deleting %s: %w", previous.Name, err), nil)
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

func (l *admissionLoop) record(written *appsv1.Deployment, err error, count *int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.Errors = append(l.Errors, err)
		return
	}
	*count++
	switch stamp, serr := framework.TemplateStamp(written); {
	case serr != nil || stamp == "":
		l.Unstamped++
	case l.want != "" && stamp != l.want:
		l.Wrong++
	}
}

// replaceUnstamped replaces Deployment probe-update with its template's
// annotations removed, as applying its manifest again does.
func replaceUnstamped(ctx context.Context, c client.Client, ns string) (*appsv1.Deployment, error) {
	d := &appsv1.Deployment{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "probe-update"}, d); err != nil {
		return nil, fmt.Errorf("reading probe-update: %w", err)
	}
	d.Spec.Template.Annotations = nil
	if err := c.Update(ctx, d); err != nil {
		return nil, fmt.Errorf("replacing probe-update: %w", err)
	}
	return d, nil
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
