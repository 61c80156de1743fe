package status

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/waves"
)

// sourcesOf lists what a pod template reads, without presence yet. refs
// come from workload.ReadsOf, as the webhook's and the hook's do, so status
// reports exactly the sources that make up the checksum.
func sourcesOf(refs []hasher.Reference) []Source {
	out := make([]Source, 0, len(refs))
	for _, r := range refs {
		keys := []string{AllKeys}
		if !r.AllKeys {
			keys = append([]string{}, r.Keys...)
		}
		out = append(out, Source{Kind: string(r.Kind), Name: r.Name, Keys: keys, Optional: r.Optional, Presence: PresenceUnknown})
	}
	return out
}

// presenceKey identifies one source in one namespace.
type presenceKey struct {
	namespace string
	kind      string
	name      string
}

type presenceResult struct {
	presence Presence
	ignored  bool
	wavesOff bool
	window   map[string]string
	err      error
}

// presenceChecker checks whether sources exist with metadata-only reads, so
// that no value is ever fetched, remembering answers: readers often share
// sources.
type presenceChecker struct {
	c     client.Reader
	known map[presenceKey]presenceResult
}

func newPresenceChecker(c client.Reader) *presenceChecker {
	return &presenceChecker{c: c, known: map[presenceKey]presenceResult{}}
}

// fill sets Presence (and Error) of every source in namespace ns.
func (p *presenceChecker) fill(ctx context.Context, ns string, sources []Source) {
	for i := range sources {
		s := &sources[i]
		r := p.check(ctx, presenceKey{ns, s.Kind, s.Name})
		s.Presence, s.Ignored, s.WavesOff, s.windowAnnotations = r.presence, r.ignored, r.wavesOff, r.window
		if r.err != nil {
			s.Error = r.err.Error()
		}
	}
}

func (p *presenceChecker) check(ctx context.Context, key presenceKey) presenceResult {
	if r, ok := p.known[key]; ok {
		return r
	}
	obj := &metav1.PartialObjectMetadata{}
	obj.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(key.kind))
	err := p.c.Get(ctx, client.ObjectKey{Namespace: key.namespace, Name: key.name}, obj)
	var r presenceResult
	switch {
	case apierrors.IsNotFound(err):
		r = presenceResult{presence: Absent}
	case err != nil:
		r = presenceResult{presence: PresenceUnknown, err: err}
	case obj.GetDeletionTimestamp() != nil:
		// As for the webhook: pods started from now on will not find it.
		r = presenceResult{presence: Absent}
	default:
		// The annotation is metadata, so this read still fetches no value.
		r = presenceResult{presence: Present, ignored: hasher.IgnoredBy(obj.GetAnnotations()), wavesOff: waves.Off(obj.GetAnnotations()),
			window: windowAnnotations(obj.GetAnnotations())}
	}
	p.known[key] = r
	return r
}
