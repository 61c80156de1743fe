package pinner

import (
	"context"
	"errors"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
)

// errMoved: a source changed between the two reads of make.
var errMoved = errors.New("changed while its snapshot was made")

// make pins from the live sources: they are read once for their digests
// and facts (the objects dropped as read, so a template of many large
// sources holds one at a time), and only when they still give the stamp
// is each pinned source read again and copied. have holds the snapshots
// already sealed to the stamp (an earlier, interrupted attempt).
func (p *Pinner) make(ctx context.Context, ns, stamp, label string, refs []hasher.Reference, rev revision, have map[hasher.Source]snapshot, dryRun bool) Result {
	contents := make(map[hasher.Source]hasher.Content, len(refs))
	found := make(map[hasher.Source]bool, len(refs))
	var pin []hasher.Reference
	for _, ref := range refs {
		facts, c, err := p.readSource(ctx, ns, ref.Source)
		if err != nil {
			return notPinned(failed(ReadFailed, err), "reading "+ref.Source.String()+": "+err.Error())
		}
		contents[ref.Source], found[ref.Source] = c, facts.Found
		if pinning.SkipOf(facts) == pinning.Pinned {
			pin = append(pin, ref)
		}
	}
	res, err := hasher.Checksum(p.Key, ns, refs, func(s hasher.Source) (hasher.Content, bool, error) {
		return contents[s], found[s], nil
	})
	if err != nil || res.Checksum != stamp {
		return notPinned(ContentMovedOn, "")
	}
	if len(pin) == 0 {
		return notPinned(NothingToPin, "")
	}
	if dryRun {
		return notPinned(DryRun, "")
	}
	set := map[hasher.Source]snapshot{}
	writes := 0
	for _, ref := range pin {
		want := pinning.Name(p.Key, ns, ref.Source, pinning.Select(ref, contents[ref.Source]))
		if s, ok := have[ref.Source]; ok && s.meta.Name == want && s.count == len(pin) {
			if !owns(&s.meta, rev.owner) {
				if err := p.seal(ctx, ref.Kind, s.meta, "", "", rev.owner); err != nil {
					return Result{Reason: failed(WriteFailed, err), Detail: ref.Source.String() + ": " + err.Error(), Writes: writes}
				}
				writes++
			}
			set[ref.Source] = s
			continue
		}
		s, n, reason, err := p.snapshotOf(ctx, ns, stamp, label, ref, want, len(pin), rev.owner)
		writes += n
		if reason != Pinned {
			detail := ref.Source.String()
			if err != nil {
				detail += ": " + err.Error()
			}
			return Result{Reason: failed(reason, err), Detail: detail, Writes: writes}
		}
		set[ref.Source] = s
	}
	return pinned(set, refs, writes)
}

// readSource reads one source live and returns what the policy and the
// checksum need of it.
func (p *Pinner) readSource(ctx context.Context, ns string, src hasher.Source) (pinning.SourceFacts, hasher.Content, error) {
	facts := pinning.SourceFacts{Source: src}
	obj, err := p.get(ctx, ns, src.Kind, src.Name)
	if apierrors.IsNotFound(err) {
		return facts, hasher.Content{}, nil
	}
	if err != nil {
		return facts, hasher.Content{}, err
	}
	facts.Found, facts.Annotations = true, obj.GetAnnotations()
	switch o := obj.(type) {
	case *corev1.Secret:
		facts.SecretType = o.Type
		return facts, hasher.SecretContent(o), nil
	case *corev1.ConfigMap:
		return facts, hasher.ConfigMapContent(o), nil
	}
	return facts, hasher.Content{}, nil
}

// snapshotOf makes the snapshot of ref named want, sealed to stamp for a
// set of n and owned by owner, or seals the one that exists. It returns the
// writes made and, when it could not, why.
func (p *Pinner) snapshotOf(ctx context.Context, ns, stamp, label string, ref hasher.Reference, want string, n int, owner metav1.OwnerReference) (snapshot, int, Reason, error) {
	obj, err := p.copyOf(ctx, ns, ref, want)
	if errors.Is(err, errMoved) {
		return snapshot{}, 0, ContentMovedOn, nil
	}
	if err != nil {
		return snapshot{}, 0, ReadFailed, err
	}
	seal := pinning.Seal(p.Key, ns, stamp, want, n)
	obj.GetLabels()[label] = seal
	obj.SetOwnerReferences([]metav1.OwnerReference{owner})
	err = p.Client.Create(ctx, obj, client.FieldOwner(contract.FieldManager))
	if err == nil {
		return snapshot{meta: metaOf(obj), count: n}, 1, Pinned, nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return snapshot{}, 0, WriteFailed, err
	}
	// Shared with another revision, or made a moment ago by another pod of
	// this one: use it only if it is what its name says.
	src, meta, err := p.verified(ctx, ns, want, ref.Kind)
	if err != nil || src != ref.Source {
		return snapshot{}, 0, LookAlike, err
	}
	if have, ok := pinning.SealedTo(p.Key, &meta, stamp); ok && have == n && owns(&meta, owner) {
		return snapshot{meta: meta, count: n}, 0, Pinned, nil
	}
	if pinning.StampCount(&meta) >= pinning.MaxStamps {
		return snapshot{}, 0, TooManyStamps, nil
	}
	if err := p.seal(ctx, ref.Kind, meta, label, seal, owner); err != nil {
		return snapshot{}, 0, WriteFailed, err
	}
	return snapshot{meta: meta, count: n}, 1, Pinned, nil
}

// copyOf reads ref's source again and builds its snapshot, which must be
// the one named want (the content the checksum was made from).
func (p *Pinner) copyOf(ctx context.Context, ns string, ref hasher.Reference, want string) (client.Object, error) {
	obj, err := p.get(ctx, ns, ref.Kind, ref.Name)
	if err != nil {
		return nil, err
	}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		obj = pinning.ConfigMapSnapshot(p.Key, o, ref)
	case *corev1.Secret:
		obj = pinning.SecretSnapshot(p.Key, o, ref)
	}
	if obj.GetName() != want {
		return nil, errMoved
	}
	return obj, nil
}
