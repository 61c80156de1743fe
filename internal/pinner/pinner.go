package pinner

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
)

// Pinner decides the snapshots of new pods. Its Client must read live (not
// a cache: a snapshot made by another replica a moment ago must be seen)
// and be allowed to create and patch ConfigMaps and Secrets in pinning
// namespaces.
type Pinner struct {
	Client client.Client
	// Key is confighash's HMAC key, the checksum's.
	Key []byte
}

// Pin decides pod's snapshots. pod is the pod being created, its spec not
// yet rewritten; dryRun says the create is a dry run, which writes nothing.
func (p *Pinner) Pin(ctx context.Context, pod *corev1.Pod, dryRun bool) Result {
	stamp := pod.Annotations[contract.ChecksumAnnotation]
	label, err := pinning.StampLabelKey(stamp)
	if err != nil {
		return notPinned(NotStamped, "")
	}
	rev, res, ok := p.revisionOf(ctx, pod)
	if !ok {
		return res
	}
	res = p.pin(ctx, pod, stamp, label, rev, dryRun)
	res.Workload = rev.workload
	return res
}

// pin decides the snapshots of pod, made from rev.
func (p *Pinner) pin(ctx context.Context, pod *corev1.Pod, stamp, label string, rev revision, dryRun bool) Result {
	if rev.optedOut {
		return notPinned(OptedOut, "")
	}
	refs, _ := hasher.References(&rev.template.Spec, rev.template.Annotations)
	if len(refs) == 0 {
		return notPinned(NothingToPin, "")
	}
	have, err := p.sealedSet(ctx, pod.Namespace, stamp, label, refs)
	if err != nil {
		return notPinned(failed(ReadFailed, err), "listing snapshots: "+err.Error())
	}
	if complete(have, refs) {
		writes := 0
		if !dryRun {
			for src, s := range have {
				if owns(&s.meta, rev.owner) {
					continue
				}
				if err := p.seal(ctx, src.Kind, s.meta, "", "", rev.owner); err != nil {
					return notPinned(failed(WriteFailed, err), "adding "+rev.owner.Name+" as an owner of "+s.meta.Name+": "+err.Error())
				}
				writes++
			}
		}
		return pinned(have, refs, writes)
	}
	return p.make(ctx, pod.Namespace, stamp, label, refs, rev, have, dryRun)
}

// pinned is the Result for a complete set.
func pinned(set map[hasher.Source]snapshot, refs []hasher.Reference, writes int) Result {
	r := Result{Snapshots: map[hasher.Source]string{}, Held: map[hasher.Source]hasher.Reference{}, Writes: writes}
	for _, ref := range refs {
		if s, ok := set[ref.Source]; ok {
			r.Snapshots[ref.Source] = s.meta.Name
			r.Held[ref.Source] = ref
		}
	}
	return r
}
