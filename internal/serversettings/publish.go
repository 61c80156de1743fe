package serversettings

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/internal/contract"
)

// RepublishInterval is how often the leader applies the settings again:
// an edit or a deletion lasts at most this long. One apply that changes
// nothing is one PATCH and no write to etcd.
const RepublishInterval = 10 * time.Minute

// Publisher writes Settings into ConfigMapName in Namespace. It is a
// manager.Runnable that needs leader election (the default), so that only
// the leader writes: see the package doc.
type Publisher struct {
	Client    client.Client
	Namespace string
	Settings  Settings
	// Interval is RepublishInterval when zero.
	Interval time.Duration
}

// Start publishes, retrying with backoff until it succeeds, then again
// every Interval, until ctx ends. A failure never stops the server: the
// CLIs say they fall back to their flags when they find no settings.
func (p *Publisher) Start(ctx context.Context) error {
	data, err := p.Settings.Data()
	if err != nil {
		// The server's own flags, validated already: only bounds apply.
		log.FromContext(ctx).Error(err, "not publishing the settings for status and preview")
		return nil
	}
	interval := p.Interval
	if interval <= 0 {
		interval = RepublishInterval
	}
	fresh := wait.Backoff{Duration: time.Second, Factor: 2, Steps: 8, Cap: time.Minute}
	backoff := fresh
	for {
		delay := interval
		if err := p.apply(ctx, data); err != nil {
			log.FromContext(ctx).Error(err, "publishing the settings for status and preview")
			delay = backoff.Step()
		} else {
			backoff = fresh
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(delay):
		}
	}
}

func (p *Publisher) apply(ctx context.Context, data map[string]string) error {
	cm := corev1ac.ConfigMap(ConfigMapName, p.Namespace).
		WithLabels(map[string]string{"app.kubernetes.io/name": "confighash", "app.kubernetes.io/component": "settings"}).
		WithData(data)
	if err := p.Client.Apply(ctx, cm, client.FieldOwner(contract.FieldManager), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying configmap %s/%s: %w", p.Namespace, ConfigMapName, err)
	}
	return nil
}
