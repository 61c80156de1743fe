package preview

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/pinning"
	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/waves"
	"github.com/confighash/confighash/internal/window"
	"github.com/confighash/confighash/internal/workload"
)

// Facts is what Gather read of the cluster, with the input: everything
// Compute needs, and no value (sources are held as digests, as
// hasher.Content).
type Facts struct {
	Namespace string
	Source    hasher.Source
	// Served is the injection policy's answer for Namespace.
	Served injection.Decision
	// Live is the source as it is, nil when it does not exist (applying
	// the input creates it); New is the input's.
	Live *SourceState
	New  SourceState
	// Readers are the workloads of Namespace whose template reads Source
	// (or would, but for confighash.dev/exclude), sorted by kind then name.
	Readers []Reader
	// Others are the readers' other sources, as they are.
	Others map[hasher.Source]Other
	// Warnings are what Gather could not tell (whether the hook watches a
	// custom kind).
	Warnings []string
	// Now is when Gather read the cluster: a hold or halt dated further
	// ahead is refused, as the hook refuses it. Zero checks no date.
	Now time.Time
	// Pins: the namespace is labelled for pinning, and Source would be
	// pinned (SourcePin is pinning.Pinned); SourcePin says why not when it
	// is not. Only meaningful when the namespace pins (NamespacePins).
	NamespacePins bool
	SourcePin     pinning.Skip
	// NamespaceAnnotations are the namespace's (for its rollout window
	// and freezes), SourceAnnotations the input's (the window and urgency
	// of the source as it is after the change), and Windows the hook's
	// --rollout-window and --freeze: window.Decide's inputs.
	NamespaceAnnotations, SourceAnnotations map[string]string
	Windows                                 window.Cluster
}

// SourceState is one version of a source, as the checksum sees it.
type SourceState struct {
	// Content holds the digests, or nothing when Err is set.
	Content hasher.Content
	// Err is why the content is not held: the source has more keys than
	// the hook holds (a *sources.NotHeldError), as the hook refuses it.
	Err error
	// WavesOff: the source carries confighash.dev/waves=off.
	WavesOff bool
	// Immutable: the source is marked immutable, so the apiserver refuses
	// any change to its content.
	Immutable bool
}

// Other is one of the readers' other sources, as it is.
type Other struct {
	Found bool
	State SourceState
	// ReadErr: it could not be read (forbidden, say).
	ReadErr error
}

// Reader is one workload that reads the source.
type Reader struct {
	// KindName is the kind's registry name (workload.Kind.Name).
	KindName string
	Name     string
	// Annotations are the workload's own (not its template's).
	Annotations map[string]string
	// Refs are what it reads (workload.ReadsOf); Skip why confighash acts
	// on none of it.
	Refs []hasher.Reference
	Skip workload.Skip
	// Excluded: the template reads the source, but the workload's
	// confighash.dev/exclude drops it.
	Excluded bool
	// Deleting: the workload is being deleted; the hook leaves it alone.
	Deleting bool
	// Stamp is the checksum its template carries, or "".
	Stamp string
	// NotWatched, when set, is why the hook refuses to watch the
	// workload's kind (a custom kind whose template path leads nowhere).
	NotWatched string
	// NoPod, when set, is why a re-stamp of it starts no pod
	// (health.NothingToRun): the hook puts such a reader in no wave.
	NoPod string
	// Failing, when set, is why it was failing before the change
	// (health.Before): the hook re-stamps it at once, unjudged.
	Failing string
	// PinOff: it or its template carries confighash.dev/pin: "off".
	PinOff bool
}

// StateOf digests a source (a *corev1.ConfigMap or *corev1.Secret, live or
// from the input) the one way the hook does, through sources.Slimmer, under
// the same key bound (maxKeys; 0 for the default).
func StateOf(obj client.Object, maxKeys int) (SourceState, error) {
	st := SourceState{WavesOff: waves.Off(obj.GetAnnotations())}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		st.Immutable = o.Immutable != nil && *o.Immutable
	case *corev1.Secret:
		st.Immutable = o.Immutable != nil && *o.Immutable
	}
	slim, err := sources.Slimmer{MaxKeys: maxKeys}.Slim(obj)
	if err != nil {
		return SourceState{}, err
	}
	st.Content, st.Err = sources.Content(slim)
	return st, nil
}
