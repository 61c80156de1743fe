package serversettings

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/confighash/confighash/internal/contract"
)

const ns = "confighash-system"

func settingsRef() types.NamespacedName {
	return types.NamespacedName{Namespace: ns, Name: ConfigMapName}
}

// TestPublishThenRead: the leader's apply creates the ConfigMap under
// confighash's field manager, Read gets the settings back, and the next
// apply undoes an edit.
func TestPublishThenRead(t *testing.T) {
	c := fake.NewClientBuilder().WithReturnManagedFields().Build()
	s := Settings{Namespaces: []string{"team-a"}, WorkloadKinds: []string{widgetKind}, MaxWaveSize: 3, MaxSourceKeys: 9, WebhookConfigName: "confighash"}
	p := &Publisher{Client: c, Namespace: ns, Settings: s, Interval: 20 * time.Millisecond}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- p.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	})

	cm := waitFor(t, c, func(cm *corev1.ConfigMap) bool { return cm.Data[string(KeyMaxWaveSize)] == "3" })
	if len(cm.ManagedFields) == 0 || cm.ManagedFields[0].Manager != contract.FieldManager {
		t.Errorf("managed fields %+v, want one entry of %s", cm.ManagedFields, contract.FieldManager)
	}
	v, err := Read(t.Context(), c, ns)
	if err != nil {
		t.Fatal(err)
	}
	if got := v[KeyWorkloadKind]; len(got) != 1 || got[0] != widgetKind {
		t.Errorf("workload-kind read back as %q", got)
	}

	cm.Data[string(KeyMaxWaveSize)] = "99"
	if err := c.Update(t.Context(), cm, client.FieldOwner("someone")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, func(cm *corev1.ConfigMap) bool { return cm.Data[string(KeyMaxWaveSize)] == "3" })
}

func waitFor(t *testing.T, c client.Client, ok func(*corev1.ConfigMap) bool) *corev1.ConfigMap {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		cm := &corev1.ConfigMap{}
		err := c.Get(t.Context(), settingsRef(), cm)
		if err == nil && ok(cm) {
			return cm
		}
		if time.Now().After(deadline) {
			t.Fatalf("the ConfigMap is not as published: %v %+v", err, cm.Data)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestReadTellsUnavailableFromGarbage: a missing or forbidden ConfigMap is
// an UnavailableError (the CLI falls back to its flags); one holding
// garbage is another error, which names the key.
func TestReadTellsUnavailableFromGarbage(t *testing.T) {
	var unavailable *UnavailableError
	_, err := Read(t.Context(), fake.NewClientBuilder().Build(), ns)
	if !errors.As(err, &unavailable) || !apierrors.IsNotFound(err) {
		t.Errorf("missing: %v, want an UnavailableError wrapping NotFound", err)
	}

	forbidden := interceptor.NewClient(fake.NewClientBuilder().Build(), interceptor.Funcs{
		Get: func(context.Context, client.WithWatch, client.ObjectKey, client.Object, ...client.GetOption) error {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, ConfigMapName, errors.New("no RBAC"))
		},
	})
	if _, err := Read(t.Context(), forbidden, ns); !errors.As(err, &unavailable) || !apierrors.IsForbidden(err) {
		t.Errorf("forbidden: %v, want an UnavailableError wrapping Forbidden", err)
	}

	garbage := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: ConfigMapName},
		Data: map[string]string{string(KeyMaxWaveSize): "lots"}}
	_, err = Read(t.Context(), fake.NewClientBuilder().WithObjects(garbage).Build(), ns)
	if err == nil || errors.As(err, &unavailable) || !strings.Contains(err.Error(), "max-wave-size") || !strings.Contains(err.Error(), settingsRef().String()) {
		t.Errorf("garbage: %v, want an error naming the key and the ConfigMap", err)
	}
}
