package snapshotgc

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	metadatafake "k8s.io/client-go/metadata/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/internal/injection"
)

// A leader whose context ends while the snapshot informers still sync
// leaves no queue running behind it (its goroutines would outlive the
// controller).
func TestStartEndedBeforeSyncShutsTheQueueDown(t *testing.T) {
	scheme := runtime.NewScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	cl := fake.NewClientBuilder().Build()
	c, err := New(Config{Metadata: metadatafake.NewSimpleMetadataClient(scheme), Client: cl, Namespaces: cl,
		Policy: injection.New("confighash-system"), Key: testKey, Coalesce: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if !c.queue.ShuttingDown() {
		t.Fatal("Start returned with its queue still running: its goroutines leak")
	}
}
