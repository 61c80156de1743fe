package status

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The client's rate when its config sets none: status makes one request per
// workload and per source, which client-go's default of 5 per second would
// turn into a crawl.
const (
	clientQPS   = 50
	clientBurst = 100
)

// NewClient returns a client for Collect and CheckInstall. API warnings are
// not printed; the ones answering a dry-run are attached to the workload
// (see DryRunStamper).
func NewClient(cfg *rest.Config) (client.Client, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.WarningHandler = nil
	cfg.WarningHandlerWithContext = warningRouter{}
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = clientQPS, clientBurst
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building scheme: %w", err)
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return c, nil
}

// warningRouter hands each API warning to the collector in the request's
// context, if any, and drops it otherwise.
type warningRouter struct{}

func (warningRouter) HandleWarningHeaderWithContext(ctx context.Context, _ int, _ string, text string) {
	if w, ok := ctx.Value(warningsKey{}).(*warnings); ok {
		w.add(text)
	}
}

type warningsKey struct{}

// warnings collects the warnings of the requests made with one context.
type warnings struct {
	mu   sync.Mutex
	text []string
}

// collectWarnings returns a context whose requests' warnings end up in the
// returned collector.
func collectWarnings(ctx context.Context) (context.Context, *warnings) {
	w := &warnings{}
	return context.WithValue(ctx, warningsKey{}, w), w
}

func (w *warnings) add(text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.text = append(w.text, text)
}

func (w *warnings) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.text...)
}
