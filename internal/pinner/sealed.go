package pinner

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/pinning"
)

// snapshot is one verified snapshot sealed to the stamp being pinned; only
// its metadata is kept, never its content.
type snapshot struct {
	meta metav1.ObjectMeta
	// count is how many snapshots its seal says the stamp pins.
	count int
}

// pageSize and extraPages bound the metadata LISTs that find a stamp's
// snapshots. Anyone who can create a ConfigMap can put the stamp's label on
// it, so the LIST is read metadata only, a few pages at most: a tenant's
// bulk costs a bounded read, and at worst pushes the real snapshots past
// the last page read, which leaves the pod unpinned and says so.
const (
	pageSize   = 32
	extraPages = 4
)

// sealedSet finds the snapshots sealed to stamp (whose seals are labelled
// label) in namespace, of the kinds refs read, and keeps those whose seal
// and content verify: one per source.
func (p *Pinner) sealedSet(ctx context.Context, namespace, stamp, label string, refs []hasher.Reference) (map[hasher.Source]snapshot, error) {
	out := map[hasher.Source]snapshot{}
	for _, kind := range []hasher.Kind{hasher.ConfigMap, hasher.Secret} {
		if !reads(refs, kind) {
			continue
		}
		sealed, err := p.sealedNames(ctx, namespace, stamp, label, kind, len(refs)/pageSize+extraPages)
		if err != nil {
			return nil, err
		}
		for name, n := range sealed {
			src, meta, err := p.verified(ctx, namespace, name, kind)
			if err != nil {
				continue // gone, or not what its name says: not this stamp's
			}
			out[src] = snapshot{meta: meta, count: n}
		}
	}
	return out, nil
}

// sealedNames pages through the objects of kind labelled for stamp and
// returns those whose seal verifies, with the count it carries.
func (p *Pinner) sealedNames(ctx context.Context, namespace, stamp, label string, kind hasher.Kind, pages int) (map[string]int, error) {
	out := map[string]int{}
	cont := ""
	for range pages {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(string(kind) + "List"))
		opts := []client.ListOption{client.InNamespace(namespace), client.HasLabels{label}, client.Limit(pageSize)}
		if cont != "" {
			opts = append(opts, client.Continue(cont))
		}
		if err := p.Client.List(ctx, l, opts...); err != nil {
			return nil, err
		}
		for i := range l.Items {
			if n, ok := pinning.SealedTo(p.Key, &l.Items[i].ObjectMeta, stamp); ok {
				out[l.Items[i].Name] = n
			}
		}
		if cont = l.Continue; cont == "" {
			break
		}
	}
	return out, nil
}

// verified reads a snapshot whole, checks its content against its name, and
// keeps only its metadata.
func (p *Pinner) verified(ctx context.Context, namespace, name string, kind hasher.Kind) (hasher.Source, metav1.ObjectMeta, error) {
	obj, err := p.get(ctx, namespace, kind, name)
	if err != nil {
		return hasher.Source{}, metav1.ObjectMeta{}, err
	}
	var src hasher.Source
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		src, err = pinning.VerifyConfigMap(p.Key, o)
	case *corev1.Secret:
		src, err = pinning.VerifySecret(p.Key, o)
	}
	return src, metaOf(obj), err
}

func reads(refs []hasher.Reference, kind hasher.Kind) bool {
	return slices.ContainsFunc(refs, func(r hasher.Reference) bool { return r.Kind == kind })
}

// complete reports whether set is every snapshot its seals say the stamp
// pins, each for a source refs read.
func complete(set map[hasher.Source]snapshot, refs []hasher.Reference) bool {
	if len(set) == 0 {
		return false
	}
	for src, s := range set {
		if s.count != len(set) || !slices.ContainsFunc(refs, func(r hasher.Reference) bool { return r.Source == src }) {
			return false
		}
	}
	return true
}

// owns reports whether meta lists owner among its owners.
func owns(meta *metav1.ObjectMeta, owner metav1.OwnerReference) bool {
	return slices.ContainsFunc(meta.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == owner.UID })
}
