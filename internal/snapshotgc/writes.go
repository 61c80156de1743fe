package snapshotgc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
)

// errChanged: the snapshot is not as the plan saw it any more (an owner
// added by the pinner, a patch of the collector's); its namespace is looked
// at again.
var errChanged = errors.New("changed since it was read")

// apply makes one action's write.
func (c *Controller) apply(ctx context.Context, namespace string, a action) error {
	if a.delete {
		return c.deleteUnread(ctx, namespace, a.snapshot)
	}
	if len(a.owners) == 0 {
		return nil
	}
	return c.addOwners(ctx, namespace, a.snapshot, a.owners)
}

// addOwners adds owners to s, once read whole and verified to be a
// snapshot confighash made: pods owning an application's own ConfigMap
// that a tenant labelled a snapshot would get it deleted by the garbage
// collector with the last of them. One JSON patch, which holds only if s
// is still at the version the plan read: on an empty list, an "add" of the
// whole list would replace one a concurrent writer just made.
func (c *Controller) addOwners(ctx context.Context, namespace string, s snapshot, owners []metav1.OwnerReference) error {
	if _, ok, err := c.readOurs(ctx, namespace, s, "not adding pods as owners of"); !ok {
		return err
	}
	ops := []patchOp{
		{Op: "test", Path: "/metadata/uid", Value: s.UID},
		{Op: "test", Path: "/metadata/resourceVersion", Value: s.ResourceVersion},
	}
	if len(s.Owners) == 0 {
		ops = append(ops, patchOp{Op: "add", Path: "/metadata/ownerReferences", Value: owners})
	} else {
		for _, o := range owners {
			ops = append(ops, patchOp{Op: "add", Path: "/metadata/ownerReferences/-", Value: o})
		}
	}
	body, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	obj := metaObject(s.Kind, namespace, s.Name)
	err = c.cfg.Client.Patch(ctx, obj, client.RawPatch(types.JSONPatchType, body), client.FieldOwner(contract.FieldManager))
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsInvalid(err) || apierrors.IsConflict(err):
		return fmt.Errorf("%s: %w", s.Source, errChanged)
	case err != nil:
		return fmt.Errorf("adding pods as owners of %s: %w", s.Source, err)
	}
	return nil
}

// deleteUnread deletes s, which nothing owns and no pod reads, once read
// whole and verified to be a snapshot confighash made (its content gives
// its name under the key): a tenant who may label an object but not delete
// it must not get it deleted by labelling it a snapshot. The delete holds
// only for the version verified, still with no owner.
func (c *Controller) deleteUnread(ctx context.Context, namespace string, s snapshot) error {
	obj, ok, err := c.readOurs(ctx, namespace, s, "not deleting")
	if !ok {
		return err
	}
	if len(obj.GetOwnerReferences()) != 0 {
		return fmt.Errorf("%s: %w", s.Source, errChanged)
	}
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	err = c.cfg.Client.Delete(ctx, obj, client.Preconditions{UID: &uid, ResourceVersion: &rv})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		return fmt.Errorf("%s: %w", s.Source, errChanged)
	case err != nil:
		return fmt.Errorf("deleting %s: %w", s.Source, err)
	}
	c.log.Info("deleted a snapshot no revision and no pod reads", "namespace", namespace, "snapshot", s.Source.String())
	return nil
}

// readOurs reads s whole and checks that it is still the version the plan
// saw and a snapshot confighash made. ok is false when it is not: with
// errChanged if it changed, with no error if it is gone or not
// confighash's (logged as "<doing> an object labelled as a snapshot"; not
// retried, since it stays what it is until it changes, which queues its
// namespace again).
func (c *Controller) readOurs(ctx context.Context, namespace string, s snapshot, doing string) (client.Object, bool, error) {
	var obj client.Object = &corev1.ConfigMap{}
	if s.Kind == hasher.Secret {
		obj = &corev1.Secret{}
	}
	err := c.cfg.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: s.Name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("reading %s: %w", s.Source, err)
	case obj.GetUID() != s.UID || obj.GetResourceVersion() != s.ResourceVersion:
		return nil, false, fmt.Errorf("%s: %w", s.Source, errChanged)
	}
	if err := c.ours(obj); err != nil {
		c.log.Info(doing+" an object labelled as a snapshot", "namespace", namespace, "object", s.Source.String(), "reason", err.Error())
		return nil, false, nil
	}
	return obj, true, nil
}

// ours checks that obj is a snapshot confighash made: shaped as one, its
// content giving its name under the key.
func (c *Controller) ours(obj client.Object) error {
	var err error
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		_, err = pinning.VerifyConfigMap(c.cfg.Key, o)
	case *corev1.Secret:
		_, err = pinning.VerifySecret(c.cfg.Key, o)
	}
	return err
}

// metaObject names one ConfigMap or Secret for a metadata-only write.
func metaObject(kind hasher.Kind, namespace, name string) *metav1.PartialObjectMetadata {
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(string(kind)))
	obj.SetNamespace(namespace)
	obj.SetName(name)
	return obj
}

type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value"`
}
