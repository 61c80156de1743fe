package serversettings

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// UnavailableError is a ConfigMap that could not be read: missing (a
// server older than the reader, or not started yet), forbidden, or an
// apiserver that did not answer. The reader falls back to its flags.
type UnavailableError struct {
	Ref types.NamespacedName
	Err error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("reading the settings confighash publishes in %s: %v", e.Ref, e.Err)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Read reads the settings published in namespace. It returns an
// *UnavailableError when the ConfigMap cannot be read, and another error
// when it holds what Parse refuses.
func Read(ctx context.Context, c client.Reader, namespace string) (Values, error) {
	ref := types.NamespacedName{Namespace: namespace, Name: ConfigMapName}
	cm := &corev1.ConfigMap{}
	if err := c.Get(ctx, ref, cm); err != nil {
		return nil, &UnavailableError{Ref: ref, Err: err}
	}
	v, err := Parse(cm.Data)
	if err != nil {
		return nil, fmt.Errorf("the settings confighash publishes in %s are not usable (fix or delete the ConfigMap; confighash's leader writes it again within %s): %w", ref, RepublishInterval, err)
	}
	return v, nil
}
