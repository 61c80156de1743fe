package pinner

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
)

// object is an empty object of a source's kind: a ConfigMap or a Secret.
func object(kind hasher.Kind) client.Object {
	if kind == hasher.Secret {
		return &corev1.Secret{}
	}
	return &corev1.ConfigMap{}
}

// get reads the ConfigMap or Secret name of kind in ns, live.
func (p *Pinner) get(ctx context.Context, ns string, kind hasher.Kind, name string) (client.Object, error) {
	obj := object(kind)
	return obj, p.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
}

// metaOf is a ConfigMap's or Secret's metadata, by value: what a snapshot
// keeps of the object, its content dropped.
func metaOf(obj client.Object) metav1.ObjectMeta {
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		return o.ObjectMeta
	case *corev1.Secret:
		return o.ObjectMeta
	}
	return metav1.ObjectMeta{}
}
