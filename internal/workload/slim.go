package workload

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/window"
)

// slimmedKey marks a workload SlimObject made, on its own annotations. The
// key is not a valid annotation key, so the apiserver never delivers an
// object carrying it. Its value is slimHeld, or slimOverLimit for a
// template over MaxSources or MaxReferenceBytes, whose references are not
// kept (ReadsOf reads the mark as SkipOverLimit).
//
// The mark also keeps the annotations never empty: the hook's writes are
// merge patches diffed from the cached copy, and a copy whose last kept
// annotation went would diff to "annotations": null, taking every
// annotation the slim copy does not hold with it.
const slimmedKey = "!confighash.dev/slimmed"

const (
	slimHeld      = "v1"
	slimOverLimit = "over-limit"
)

// templateKey, on the slimmed pod template's annotations, is a digest of
// the whole template but its stamp (templateDigest). Two slimmed copies
// hold the same template exactly when their digests are equal, so
// SameTemplate on them tells what it tells on the whole objects: the hook
// re-checks a template changed in anything (an image, a restart
// annotation), as it does with the whole object. Like slimmedKey, it keeps
// the template's annotations never empty.
const templateKey = "!confighash.dev/template"

// Bounds of the annotation values a slimmed workload keeps. A longer value
// is replaced by overLimitValue, which no parser accepts, so that the hook
// reads it as it reads a malformed value, and a change of it is still a
// change.
const (
	// shortValueBytes bounds the values that are a word or a number: the
	// stamp, an opt-out, a window, an order, waves.
	shortValueBytes = 256
	// recordValueBytes bounds the hook's own sealed records (rollout,
	// halt, hold): the bound internal/contract reads them within, so that
	// every record it would read is kept whole; a longer one, which it
	// refuses unread, becomes overLimitValue, refused as well.
	recordValueBytes = 16 << 10
)

// keptAnnotations are the annotations of a workload's own metadata that
// the hook reads from its cache, with the bound of each value. Include and
// exclude are bounded by MaxReferenceBytes through ReadsOf (an object over
// it keeps neither).
var keptAnnotations = map[string]int{
	contract.InjectionAnnotation:      shortValueBytes,
	contract.IncludeAnnotation:        MaxReferenceBytes,
	contract.ExcludeAnnotation:        MaxReferenceBytes,
	contract.CoalesceWindowAnnotation: shortValueBytes,
	contract.RolloutOrderAnnotation:   shortValueBytes,
	contract.WavesAnnotation:          shortValueBytes,
	contract.WindowAnnotation:         window.MaxLen,
	contract.HoldAnnotation:           recordValueBytes,
	contract.RolloutAnnotation:        recordValueBytes,
	contract.HaltAnnotation:           recordValueBytes,
}

// maxConditions bounds the status conditions kept; conditionBytes each of
// their type, status and reason (the judge reads nothing else of them).
const (
	maxConditions  = 16
	conditionBytes = 128
)

// maxSelectorBytes bounds a kept spec.selector (selectorBytes); a larger
// one is dropped, and the judge then decides the rollout from the
// workload's status without its pods, as for a kind without a selector.
const maxSelectorBytes = 4 << 10

// IsSlim reports whether obj was made by SlimObject.
func IsSlim(obj client.Object) bool {
	return obj.GetAnnotations()[slimmedKey] != ""
}

// slimmedOverLimit reports whether annotations are those of a slimmed
// workload whose template was over the limits.
func slimmedOverLimit(annotations map[string]string) bool {
	return annotations[slimmedKey] == slimOverLimit
}

// SlimObject returns the smallest copy of obj, an object of kind k, that
// the hook needs, for its cache: the identity and lifecycle, the
// annotations it reads (bounded), the fields of spec and status the
// rollout judge reads (bounded), and a pod template reduced to its stamp,
// a digest of the rest, and a pod spec that reads exactly what obj's reads
// (ReadsOf, and so hasher.Checksum, give the same answer on both). A
// template over MaxSources or MaxReferenceBytes keeps no references and is
// marked so. Whatever obj holds, the copy holds at most about 126 KB of
// heap, and a small Deployment about 3 KB (BenchmarkSlimObject,
// docs/security.md). obj is left
// as it was. An object SlimObject made, or of another kind, is returned as
// it is.
func (k Kind) SlimObject(obj client.Object) client.Object {
	return k.slimObject(obj, false)
}

// slimInPlace is SlimObject for the informer's transform, which hands it
// an object just decoded and shared with nobody: a built-in kind's copy is
// written over obj's own struct rather than into a new one. The informer
// decodes the objects it lists one after the other, so a new struct per
// object (over a kilobyte for a Deployment) would sit beside the decoded
// one, garbage a moment later: spans of the heap half used, which could
// not be returned to the OS.
func (k Kind) slimInPlace(obj client.Object) client.Object {
	return k.slimObject(obj, true)
}

func (k Kind) slimObject(obj client.Object, inPlace bool) client.Object {
	if IsSlim(obj) {
		return obj
	}
	reads := ReadsOf(k, obj)
	over := reads.Skip == SkipOverLimit || overLimit(reads.Refs, obj.GetAnnotations())
	meta := slimMeta(obj, over)
	var tmpl *corev1.PodTemplateSpec
	if t, ok := k.PodTemplate(obj); ok && reads.Skip != SkipNoTemplate {
		tmpl = &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{
			templateKey: templateDigest(t),
		}}}
		if stamp := t.Checksum(); stamp != "" {
			tmpl.Annotations[contract.ChecksumAnnotation] = bounded(stamp, shortValueBytes)
		}
		if !over {
			tmpl.Spec = readingSpec(reads.Refs)
		}
	}
	if k.Unstructured() {
		return k.slimUnstructured(obj, meta, tmpl)
	}
	out, ok := slimTyped(obj, meta, tmpl, inPlace)
	if !ok {
		return obj
	}
	return out
}

// slimMeta keeps identity, lifecycle, the controller reference and the
// annotations the hook reads. Labels go: the hook selects pods by
// spec.selector, never by the workload's labels.
func slimMeta(obj client.Object, over bool) metav1.ObjectMeta {
	mark := slimHeld
	if over {
		mark = slimOverLimit
	}
	var annotations map[string]string
	for key, v := range obj.GetAnnotations() {
		limit, ok := keptAnnotations[key]
		if !ok || (over && (key == contract.IncludeAnnotation || key == contract.ExcludeAnnotation)) {
			continue
		}
		if annotations == nil {
			annotations = map[string]string{slimmedKey: mark}
		}
		annotations[key] = bounded(v, limit)
	}
	if annotations == nil {
		annotations = markOnly[mark]
	}
	m := identityMeta(obj, annotations)
	m.Generation = obj.GetGeneration()
	if c := metav1.GetControllerOfNoCopy(obj); c != nil {
		m.OwnerReferences = []metav1.OwnerReference{{APIVersion: keep(c.APIVersion), Kind: keep(c.Kind), Name: keep(c.Name),
			UID: types.UID(keep(string(c.UID))), Controller: keepBool(c.Controller), BlockOwnerDeletion: keepBool(c.BlockOwnerDeletion)}}
	}
	return m
}

// markOnly holds, for each mark, the annotations of a slimmed workload
// that keeps none of its own: most workloads. One map per mark is shared
// by all of them, read only (nothing writes to a cached object: the hook
// patches a copy, and a copy copies the map), which saves a map of about
// 300 bytes per workload.
var markOnly = map[string]map[string]string{
	slimHeld:      {slimmedKey: slimHeld},
	slimOverLimit: {slimmedKey: slimOverLimit},
	slimIdentity:  {slimmedKey: slimIdentity},
}

// keep copies a string the slimmed copy holds. A decoded object's strings
// are small allocations among the many the decoder makes and drops at
// once; one kept there keeps its whole span of the heap in use, so the
// garbage of listing thousands of workloads could not be returned to the
// OS. A copy made when slimming sits among the slimmed copy's own
// allocations.
func keep(s string) string { return strings.Clone(s) }

// identityMeta is what every cached workload keeps of obj's metadata: its
// identity (see KeepIdentity), its creation and deletion times, and
// annotations.
func identityMeta(obj client.Object, annotations map[string]string) metav1.ObjectMeta {
	id := KeepIdentity(obj)
	m := metav1.ObjectMeta{
		Name:              id[0],
		Namespace:         id[1],
		UID:               types.UID(id[2]),
		ResourceVersion:   id[3],
		CreationTimestamp: obj.GetCreationTimestamp(),
		Annotations:       annotations,
	}
	if t := obj.GetDeletionTimestamp(); t != nil {
		d := *t
		m.DeletionTimestamp = &d
	}
	return m
}

// KeepIdentity copies obj's name, namespace, UID and resourceVersion, as
// keep does, into one allocation: a few hundred of them fill a span of the
// heap, where four small ones each would sit among the decoder's garbage.
// The sources' slimmed copies hold theirs so too.
func KeepIdentity(obj metav1.Object) [4]string {
	parts := [4]string{obj.GetName(), obj.GetNamespace(), string(obj.GetUID()), obj.GetResourceVersion()}
	var b strings.Builder
	b.Grow(len(parts[0]) + len(parts[1]) + len(parts[2]) + len(parts[3]))
	for _, p := range parts {
		b.WriteString(p)
	}
	all := b.String()
	var out [4]string
	for i, p := range parts {
		out[i], all = all[:len(p)], all[len(p):]
	}
	return out
}

// keepBool copies a *bool the slimmed copy holds, as keep a string.
func keepBool(b *bool) *bool {
	if b == nil {
		return nil
	}
	v := *b
	return &v
}

// bounded is a copy of v (keep), or overLimitValue(v) when v is longer
// than limit.
func bounded(v string, limit int) string {
	if len(v) <= limit {
		return keep(v)
	}
	return overLimitValue(v)
}

// overLimitValue stands for a value over its bound: "!" starts no value
// any confighash parser accepts, and the digest makes two long values
// differ as the values do.
func overLimitValue(v string) string {
	d := sha256.Sum256([]byte(v))
	return "!over-limit:" + hex.EncodeToString(d[:8])
}

// templateDigest digests t but its stamp, as SameTemplate compares it: the
// decoded metadata and spec, JSON-encoded (one encoding per value, so the
// pre-image is unambiguous). t's own stamp is put back before it returns.
func templateDigest(t Template) string {
	var stamp string
	var had bool
	if t.Meta != nil {
		stamp, had = t.Meta.Annotations[contract.ChecksumAnnotation]
		delete(t.Meta.Annotations, contract.ChecksumAnnotation)
	}
	b, err := json.Marshal(struct {
		Meta *metav1.ObjectMeta `json:"m"`
		Spec *corev1.PodSpec    `json:"s"`
	}{t.Meta, t.Spec})
	if had {
		t.Meta.Annotations[contract.ChecksumAnnotation] = stamp
	}
	if err != nil {
		// A decoded template always encodes; were it not to, a fixed
		// value marks the copy as different from every real digest.
		return "!unencodable"
	}
	d := sha256.Sum256(b)
	return hex.EncodeToString(d[:])
}

// Transform returns the cache transform that slims the objects of r's
// mutable kinds and hands every other object to next: SlimObject in a
// namespace serves reports served, IdentityObject elsewhere (a nil serves
// serves every namespace). serves must not block once the cache runs: the
// Namespace cache's answer, which a namespace not cached yet gives as not
// served (Filler reads its workloads again once it arrives).
func (r Registry) Transform(serves func(namespace string) bool, next func(any) (any, error)) func(any) (any, error) {
	return func(obj any) (any, error) {
		if o, ok := obj.(client.Object); ok {
			if k, ok := r.For(o); ok && k.Mutable {
				if serves != nil && !serves(o.GetNamespace()) {
					return k.identityObject(o, true), nil
				}
				return k.slimInPlace(o), nil
			}
		}
		return next(obj)
	}
}
