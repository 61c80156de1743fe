package status

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
// namespace and source. It is built from one list of each served kind per
// call, never one per source.
type haltIndex map[haltKey][]HaltedChange

type haltKey struct{ namespace, source string }

// add indexes the halt obj carries, if one is in force.
func (x haltIndex) add(kind string, obj metav1.Object) {
	h := haltOf(obj.GetAnnotations())
	if !h.InForce() {
		return
	}
	ref := refOf(kind, obj.GetName())
	for _, src := range h.Sources() {
		k := haltKey{obj.GetNamespace(), src}
		x[k] = append(x[k], HaltedChange{Source: src, Workload: ref, Reason: h.Reason, Since: h.Since})
	}
}

// of lists the halts, on workloads other than w, of changes to w's
// sources, sorted by source and workload.
func (x haltIndex) of(w *Workload) []HaltedChange {
	var out []HaltedChange
	for i := range w.Sources {
		for _, hc := range x[haltKey{w.Namespace, w.Sources[i].Ref()}] {
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
func indexHalts(ctx context.Context, c client.Reader, t Target, ns string, reg workload.Registry, objs []client.Object) (haltIndex, error) {
	x := haltIndex{}
	if t == (Target{}) {
		for _, obj := range objs {
			x.add(obj.GetObjectKind().GroupVersionKind().Kind, obj)
		}
		return x, nil
	}
	for _, k := range reg.Mutable() {
		list := &metav1.PartialObjectMetadataList{}
		list.SetGroupVersionKind(k.GVK.GroupVersion().WithKind(k.GVK.Kind + "List"))
		var opts []client.ListOption
		if ns != "" {
			opts = append(opts, client.InNamespace(ns))
		}
		err := c.List(ctx, list, opts...)
		if k.Unstructured() && meta.IsNoMatchError(err) {
			continue // the CRD is not installed: there are none
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s to find halts: %w", k.Resource, err)
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
