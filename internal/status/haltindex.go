package status

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/waves"
	"github.com/confighash/confighash/internal/workload"
)

// HaltedChange is a halt in force on another workload of the same
// namespace, of a change to a source this workload reads: while it lasts
// the hook does not re-stamp the source's other readers for that change.
type HaltedChange struct {
	// Source is "configmap/NAME" or "secret/NAME".
	Source string `json:"source"`
	// Workload is the halting workload, "kind/name".
	Workload string `json:"workload"`
	// Reason and Since are the halt's (see Halt).
	Reason string    `json:"reason"`
	Since  time.Time `json:"since"`
}

// haltIndex holds the halts in force of the namespaces looked at, by
// namespace and source, and the workloads there that opt out of waves,
// which no halt holds back (waves.PaceOf). It is built from one list of
// each served kind per call, never one per source.
type haltIndex struct {
	// now dates the halts: one dated ahead is refused (haltOf).
	now   time.Time
	halts map[haltKey][]HaltedChange
	// off are the workloads ("kind/name") by namespace with waves off.
	off map[haltKey]bool
}

type haltKey struct{ namespace, name string }

func newHaltIndex(now time.Time) *haltIndex {
	return &haltIndex{now: now, halts: map[haltKey][]HaltedChange{}, off: map[haltKey]bool{}}
}

// add indexes obj: the halt it carries, if one is in force, and whether it
// opts out of waves.
func (x *haltIndex) add(kind string, obj metav1.Object) {
	ref := refOf(kind, obj.GetName())
	if waves.Off(obj.GetAnnotations()) {
		x.off[haltKey{obj.GetNamespace(), ref}] = true
	}
	h := haltOf(obj.GetAnnotations(), x.now)
	if !h.InForce() {
		return
	}
	for _, src := range h.Sources() {
		k := haltKey{obj.GetNamespace(), src}
		x.halts[k] = append(x.halts[k], HaltedChange{Source: src, Workload: ref, Reason: h.Reason, Since: h.Since})
	}
}

// of lists the halts, on workloads other than w, of changes to w's
// sources, sorted by source and workload: none when w opts out of waves,
// and none of a source that does (waves.PaceOf: no halt holds them back).
func (x *haltIndex) of(w *Workload) []HaltedChange {
	if x.off[haltKey{w.Namespace, w.Ref()}] {
		return nil
	}
	var out []HaltedChange
	for i := range w.Sources {
		if w.Sources[i].WavesOff {
			continue
		}
		for _, hc := range x.halts[haltKey{w.Namespace, w.Sources[i].Ref()}] {
			if hc.Workload != w.Ref() {
				out = append(out, hc)
			}
		}
	}
	slices.SortFunc(out, func(a, b HaltedChange) int {
		return cmp.Or(cmp.Compare(a.Source, b.Source), cmp.Compare(a.Workload, b.Workload))
	})
	return out
}

// indexHalts indexes the halts of every workload of the served kinds in
// namespace ns ("" for all). When Collect listed them all already (no
// target), objs are they; otherwise each served kind's metadata is listed
// once, since the halting reader is another workload than the one asked
// about.
func indexHalts(ctx context.Context, c client.Reader, t Target, ns string, reg workload.Registry, objs []client.Object, now time.Time) (*haltIndex, error) {
	x := newHaltIndex(now)
	if t == (Target{}) {
		for _, obj := range objs {
			x.add(obj.GetObjectKind().GroupVersionKind().Kind, obj)
		}
		return x, nil
	}
	for _, k := range reg.Mutable() {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
		if err := listKind(ctx, c, k, ns, list); err != nil {
			return nil, fmt.Errorf("finding halts: %w", err)
		}
		for i := range list.Items {
			x.add(k.GVK.Kind, &list.Items[i])
		}
	}
	return x, nil
}

// waitingReason explains a stale workload that waits for halted changes.
func waitingReason(hs []HaltedChange) string {
	parts := make([]string, len(hs))
	sources := make([]string, 0, len(hs))
	for i, hc := range hs {
		parts[i] = fmt.Sprintf("change of %s halted at %s (%s)", hc.Source, hc.Workload, hc.Reason)
		if !slices.Contains(sources, hc.Source) {
			sources = append(sources, hc.Source)
		}
	}
	return "waiting: " + strings.Join(parts, ", ") + "; the stamp is out of date and the hook re-stamps it once the " +
		"next change of " + strings.Join(sources, ", ") + " lifts the halt, or once it is released"
}
