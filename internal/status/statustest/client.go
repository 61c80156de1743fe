// Package statustest serves tests that run status (and the other CLIs'
// reads) against a fake cluster.
package statustest

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// NewClient is a fake client holding objs. It indexes the Event fields
// status selects confighash's Events by (listEvents), which the API server
// serves and a fake client refuses unless indexed.
func NewClient(t testing.TB, objs ...client.Object) client.Client {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).
		WithIndex(&corev1.Event{}, "reportingComponent", func(o client.Object) []string {
			return []string{o.(*corev1.Event).ReportingController}
		}).
		WithIndex(&corev1.Event{}, "involvedObject.name", func(o client.Object) []string {
			return []string{o.(*corev1.Event).InvolvedObject.Name}
		}).
		Build()
}
