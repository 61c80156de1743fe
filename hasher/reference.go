package hasher

import (
	"errors"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/internal/contract"
)

// Reference is what a pod template reads of one source, merged over all the
// places that read it.
type Reference struct {
	Source
	// AllKeys is set when the whole object is read: envFrom, a volume or
	// projection without items, or the include annotation.
	AllKeys bool
	// Keys are the keys read when !AllKeys; sorted, unique.
	Keys []string
	// Optional is true only if every read of this source is optional, since
	// a single required read is enough for the pod to need the object.
	Optional bool
	// EnvOnly is true for a ConfigMap that only env valueFrom and envFrom
	// read. The kubelet builds env from data alone, so its binaryData is
	// not read, and is left out of the checksum. One volume or projection
	// of it (or the include annotation) reads binaryData too.
	EnvOnly bool
}

// References lists what spec reads, one Reference per Source, sorted by Kind
// then Name. Which fields count as reads is described in the package
// documentation.
//
// annotations may carry contract.IncludeAnnotation and contract.ExcludeAnnotation. Included
// sources are read whole and optional (see contract.IncludeAnnotation); excluded
// sources are dropped entirely,
// whoever reads them. Malformed annotation entries are skipped rather than
// failing the whole call, because one typo should not stop the rest of the
// workload's config from being tracked: the returned refs are usable even
// when err is not nil, and err joins one error per ignored entry.
func References(spec *corev1.PodSpec, annotations map[string]string) ([]Reference, error) {
	set := newRefSet(0) // the number of sources is unknown until the spec is walked
	if spec != nil {
		readPodSpec(set, spec)
	}

	include, errs := parseSourceList(contract.IncludeAnnotation, annotations[contract.IncludeAnnotation], nil)
	for _, src := range include {
		// Optional: the pods do not mount it, so its absence cannot stop
		// them starting, and must not hold back the sources they do read.
		set.addWhole(src, read{optional: true})
	}
	exclude, errs := parseSourceList(contract.ExcludeAnnotation, annotations[contract.ExcludeAnnotation], errs)

	refs := slices.DeleteFunc(set.list(), func(r Reference) bool {
		return slices.Contains(exclude, r.Source)
	})
	if len(refs) == 0 {
		refs = nil
	}
	return refs, errors.Join(errs...)
}
