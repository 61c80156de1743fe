package sources

import (
	"crypto/sha256"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/waves"
	"github.com/confighash/confighash/internal/window"
	"github.com/confighash/confighash/internal/workload"
)

// slimmed marks an object Slim has made. client-go may hand an object to the
// transform more than once (its docs ask for idempotent transforms), and
// digesting digests would change every checksum. The key is not a valid
// annotation key, so the apiserver can never deliver an object carrying it.
// Its value is the format: slimFormat when the digests are held, the reason
// when they are not (see Placeholder reasons).
const slimmed = "!confighash.dev/slimmed"

// slimFormat is the value of slimmed on an object that holds its digests:
// one raw 32-byte digest per key, all of an object's digests in one backing
// array, in BinaryData for a ConfigMap (see binaryKey) and in Data for a
// Secret.
const slimFormat = "v2"

// Why a slimmed object holds no digests. Such a placeholder keeps the
// object's identity only; Content refuses it, so that a checksum is never
// computed from content that is not there.
const (
	// NotServed: the object's namespace was not served when the object was
	// cached.
	NotServed = "namespace-not-served"
	// TooManyKeys: the object has more keys than the Slimmer's MaxKeys.
	TooManyKeys = "too-many-keys"
)

// DefaultMaxKeys is the default bound on the keys of one source. Real
// ConfigMaps and Secrets have a handful, a large one some hundreds. The
// apiserver bounds values, not keys: 120,000 empty values fit its 1 MiB.
// Held, a key costs its name (up to 253 bytes), a 32-byte digest and a map
// entry, so one source costs at most about 350 KiB under this bound,
// however it was built.
const DefaultMaxKeys = 1024

// Slimmer is the cache transform for ConfigMaps and Secrets.
type Slimmer struct {
	// Serves reports whether confighash serves a namespace. A source in a
	// namespace not served is cached as a placeholder. nil serves every
	// namespace.
	Serves func(namespace string) bool
	// MaxKeys bounds the keys of a source whose digests are held; a source
	// with more is cached as a placeholder. Zero means DefaultMaxKeys.
	MaxKeys int
}

// Slim is Slimmer{}.Slim: every namespace served, DefaultMaxKeys.
func Slim(obj any) (any, error) {
	return Slimmer{}.Slim(obj)
}

// Slim replaces a ConfigMap's or Secret's values by their digests and drops
// everything else the checksum does not need, or, for a source s does not
// hold, everything but its identity. It is idempotent and has the shape of
// a cache.TransformFunc; other objects pass through unchanged. obj is left
// as it was.
func (s Slimmer) Slim(obj any) (any, error) {
	return s.slim(obj, false)
}

// SlimInPlace is Slim for the informer's transform, which hands it an
// object just decoded and shared with nobody: the slimmed copy is written
// over obj's own struct, and a Secret's digests over its own data map, not
// into new ones. The informer decodes the objects it lists one after the
// other, so a new struct per object would sit beside the decoded one,
// garbage a moment later: one struct in two kept, spans of the heap half
// used that could not be returned to the OS.
func (s Slimmer) SlimInPlace(obj any) (any, error) {
	return s.slim(obj, true)
}

func (s Slimmer) slim(obj any, inPlace bool) (any, error) {
	if o, ok := obj.(metav1.Object); ok && o.GetAnnotations()[slimmed] != "" {
		return obj, nil
	}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		v := corev1.ConfigMap{TypeMeta: o.TypeMeta}
		var held bool
		v.ObjectMeta, held = s.meta(o.ObjectMeta, len(o.Data)+len(o.BinaryData))
		if held {
			v.BinaryData = digests(o.Data, o.BinaryData, binaryKey)
		}
		return into(o, v, inPlace), nil
	case *corev1.Secret:
		v := corev1.Secret{TypeMeta: o.TypeMeta, Type: secretType(o.Type)}
		var held bool
		v.ObjectMeta, held = s.meta(o.ObjectMeta, len(o.Data))
		switch {
		case held && inPlace:
			v.Data = digestsOver(o.Data)
		case held:
			v.Data = digests(nil, o.Data, "")
		}
		return into(o, v, inPlace), nil
	}
	return obj, nil
}

// into writes v over o when inPlace, else into a new object.
func into[T any](o *T, v T, inPlace bool) *T {
	if !inPlace {
		o = new(T)
	}
	*o = v
	return o
}

// digestsOver is digests(nil, data, "") written over data itself: the
// same keys, each value replaced by its digest, all digests in one backing
// array.
func digestsOver(data map[string][]byte) map[string][]byte {
	if len(data) == 0 {
		return nil
	}
	buf := make([]byte, len(data)*sha256.Size)
	at := 0
	for k, v := range data {
		d := hasher.DigestOf(v)
		copy(buf[at:], d[:])
		// Capped, so that an append to one digest cannot overwrite the next.
		data[k] = buf[at : at+sha256.Size : at+sha256.Size]
		at += sha256.Size
	}
	return data
}

// meta slims m and says whether the object's digests are to be held.
func (s Slimmer) meta(m metav1.ObjectMeta, keys int) (metav1.ObjectMeta, bool) {
	max := s.MaxKeys
	if max <= 0 {
		max = DefaultMaxKeys
	}
	switch {
	case s.Serves != nil && !s.Serves(m.Namespace):
		return slimMeta(m, NotServed), false
	case keys > max:
		return slimMeta(m, TooManyKeys), false
	}
	return slimMeta(m, slimFormat), true
}

// slimMeta keeps identity and lifecycle only. Labels and annotations go: the
// last-applied-configuration annotation holds a Secret's data in clear.
// The exceptions are contract.IgnoreAnnotation, which decides how the
// source enters a checksum, and contract.WavesAnnotation and
// contract.UrgentAnnotation, which decide whether and when its readers go
// in waves; each is kept as a fixed value, never copied; and
// contract.WindowAnnotation, copied within its bound. Every string kept is a copy (keep), not the decoded one; the
// identity's four in one allocation (workload.KeepIdentity).
func slimMeta(m metav1.ObjectMeta, format string) metav1.ObjectMeta {
	ignored := hasher.IgnoredBy(m.Annotations)
	wavesOff := waves.Off(m.Annotations)
	schedule, windowed := m.Annotations[contract.WindowAnnotation]
	urgent := m.Annotations[contract.UrgentAnnotation] != ""
	annotations := markOnly[format]
	if ignored || wavesOff || windowed || urgent || annotations == nil {
		annotations = map[string]string{slimmed: format}
		if ignored {
			annotations[contract.IgnoreAnnotation] = contract.IgnoreTrue
		}
		if wavesOff {
			annotations[contract.WavesAnnotation] = contract.WavesOff
		}
		if windowed {
			annotations[contract.WindowAnnotation] = keepSchedule(schedule)
		}
		if urgent {
			// Its note is read live when it is used (the hook's Event).
			annotations[contract.UrgentAnnotation] = urgentMark
		}
	}
	id := workload.KeepIdentity(&m)
	out := metav1.ObjectMeta{
		Name:              id[0],
		Namespace:         id[1],
		UID:               types.UID(id[2]),
		ResourceVersion:   id[3],
		Generation:        m.Generation,
		CreationTimestamp: m.CreationTimestamp,
		Annotations:       annotations,
	}
	if m.DeletionTimestamp != nil {
		t := *m.DeletionTimestamp
		out.DeletionTimestamp = &t
	}
	return out
}

// urgentMark stands for any contract.UrgentAnnotation note in a slimmed
// copy.
const urgentMark = "set"

// keepSchedule copies a window annotation within window.MaxLen; a longer
// one is kept as a value that does not parse, so that it is refused as
// the original would be, at a fixed cost.
func keepSchedule(s string) string {
	if len(s) > window.MaxLen {
		return "over the length limit"
	}
	return keep(s)
}

// markOnly holds, for each format, the annotations of a slimmed source that
// keeps none of its own: almost every source. One map per format is shared
// by all of them, read only (nothing writes to a cached object, and a copy
// of one copies the map), which saves a map of about 300 bytes per source.
var markOnly = map[string]map[string]string{
	slimFormat:  {slimmed: slimFormat},
	NotServed:   {slimmed: NotServed},
	TooManyKeys: {slimmed: TooManyKeys},
}

// keep copies a string the slimmed copy holds. A decoded object's strings
// are small allocations among the many the decoder makes and drops at once;
// one kept there keeps its whole span of the heap in use, so the garbage of
// a list of thousands of objects could not be returned to the OS. A copy
// made when slimming sits among the slimmed copy's own allocations.
func keep(s string) string { return strings.Clone(s) }

// secretType is t, as the constant of a type Kubernetes defines, so that
// the Secrets of the usual types hold no string of their own (see keep).
func secretType(t corev1.SecretType) corev1.SecretType {
	for _, known := range []corev1.SecretType{corev1.SecretTypeOpaque, corev1.SecretTypeServiceAccountToken,
		corev1.SecretTypeDockercfg, corev1.SecretTypeDockerConfigJson, corev1.SecretTypeBasicAuth,
		corev1.SecretTypeSSHAuth, corev1.SecretTypeTLS, corev1.SecretTypeBootstrapToken} {
		if t == known {
			return known
		}
	}
	return corev1.SecretType(keep(string(t)))
}

// binaryKey prefixes, in a slimmed ConfigMap's BinaryData, the keys that
// come from its binaryData; the others come from data. "!" is not a valid
// key character, so no key of data can look like one of binaryData.
const binaryKey = "!"

// digests digests every value of data (strings) and binary into one map
// whose digests share one backing array, and whose keys one string: an
// object of n keys costs a few allocations, not n, and 32 bytes a digest.
// Raw bytes live in a []byte map, which survives JSON (a string field
// would not hold them). Keys of binary get binaryKey in front when data is
// not nil (a ConfigMap).
func digests(data map[string]string, binary map[string][]byte, prefix string) map[string][]byte {
	n := len(data) + len(binary)
	if n == 0 {
		return nil
	}
	// The keys are copied too (see keep), into one string: one pass
	// writes each key and its digest in the same order, since a map's
	// order differs from one range to the next.
	size := 0
	for k := range data {
		size += len(k)
	}
	for k := range binary {
		size += len(prefix) + len(k)
	}
	var keys strings.Builder
	keys.Grow(size)
	ends := make([]int, 0, n)
	buf := make([]byte, 0, n*sha256.Size)
	for k, v := range data {
		keys.WriteString(k)
		ends = append(ends, keys.Len())
		d := hasher.DigestOf([]byte(v))
		buf = append(buf, d[:]...)
	}
	for k, v := range binary {
		keys.WriteString(prefix)
		keys.WriteString(k)
		ends = append(ends, keys.Len())
		d := hasher.DigestOf(v)
		buf = append(buf, d[:]...)
	}
	all := keys.String()
	out := make(map[string][]byte, n)
	start := 0
	for i, end := range ends {
		at := i * sha256.Size
		// Capped, so that an append to one digest cannot overwrite the next.
		out[all[start:end]] = buf[at : at+sha256.Size : at+sha256.Size]
		start = end
	}
	return out
}

// NotHeldError is Content's answer for a placeholder: the cache knows the
// source exists but not what it holds. It names the source, never content.
type NotHeldError struct {
	Source    hasher.Source
	Namespace string
	// Reason is NotServed or TooManyKeys.
	Reason string
}

func (e *NotHeldError) Error() string {
	if e.Reason == TooManyKeys {
		return fmt.Sprintf("%s in %s has more keys than confighash holds per source", e.Source, e.Namespace)
	}
	return fmt.Sprintf("%s in %s: content not cached (%s)", e.Source, e.Namespace, e.Reason)
}

// placeholder returns why obj holds no digests: NotServed, TooManyKeys, or
// "" for an object that holds them (or was not slimmed).
func placeholder(obj metav1.Object) string {
	if e := notHeld(obj); e != nil {
		return e.Reason
	}
	return ""
}

// notHeld returns the NotHeldError of obj when it is a placeholder.
func notHeld(obj metav1.Object) *NotHeldError {
	reason := obj.GetAnnotations()[slimmed]
	if reason == "" || reason == slimFormat {
		return nil
	}
	e := &NotHeldError{Namespace: obj.GetNamespace(), Reason: reason, Source: hasher.Source{Name: obj.GetName()}}
	switch obj.(type) {
	case *corev1.ConfigMap:
		e.Source.Kind = hasher.ConfigMap
	case *corev1.Secret:
		e.Source.Kind = hasher.Secret
	}
	return e
}

// Content reads the digests back out of a slimmed object. It fails on an
// object that was not slimmed, rather than hashing values as if they were
// digests, and with a *NotHeldError on a placeholder, unless it is ignored.
func Content(obj any) (hasher.Content, error) {
	o, ok := obj.(metav1.Object)
	if !ok || o.GetAnnotations()[slimmed] == "" {
		return hasher.Content{}, fmt.Errorf("%T was not slimmed", obj)
	}
	if e := notHeld(o); e != nil {
		// An ignored source enters every checksum as a fixed marker, not
		// its content, so its placeholder (which keeps the annotation)
		// needs no digests: it never holds a reader back.
		if hasher.IgnoredBy(o.GetAnnotations()) {
			return hasher.Content{Ignored: true}, nil
		}
		return hasher.Content{}, e
	}
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		if len(o.Data) > 0 {
			return hasher.Content{}, fmt.Errorf("configmap %s/%s: data holds values, not digests", o.Namespace, o.Name)
		}
		var data, bin map[string]hasher.Digest
		for k, v := range o.BinaryData {
			d, err := toDigest(v)
			if err != nil {
				return hasher.Content{}, fmt.Errorf("configmap %s/%s key %q: %w", o.Namespace, o.Name, k, err)
			}
			if name, ok := strings.CutPrefix(k, binaryKey); ok {
				if bin == nil {
					bin = map[string]hasher.Digest{}
				}
				bin[name] = d
				continue
			}
			if data == nil {
				data = make(map[string]hasher.Digest, len(o.BinaryData))
			}
			data[k] = d
		}
		return hasher.Content{Data: data, BinaryData: bin, Ignored: hasher.IgnoredBy(o.Annotations)}, nil
	case *corev1.Secret:
		data, err := fromRaw(o.Data)
		if err != nil {
			return hasher.Content{}, fmt.Errorf("secret %s/%s: %w", o.Namespace, o.Name, err)
		}
		return hasher.Content{Data: data, Ignored: hasher.IgnoredBy(o.Annotations)}, nil
	}
	return hasher.Content{}, fmt.Errorf("unsupported source type %T", obj)
}

func fromRaw(in map[string][]byte) (map[string]hasher.Digest, error) {
	out := make(map[string]hasher.Digest, len(in))
	for k, v := range in {
		d, err := toDigest(v)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", k, err)
		}
		out[k] = d
	}
	return out, nil
}

func toDigest(b []byte) (hasher.Digest, error) {
	var d hasher.Digest
	if len(b) != len(d) {
		return d, fmt.Errorf("not a slimmed digest: %d bytes", len(b))
	}
	copy(d[:], b)
	return d, nil
}
