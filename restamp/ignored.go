package restamp

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/confighash/confighash/hasher"
)

// Reasons a differing stamp is kept because of hasher.IgnoreAnnotation, as
// metric labels; see keepAcrossIgnore.
const (
	keptIgnoreToggled = "ignore-toggled"
	keptIgnoredSource = "ignored-source"
)

// ignored reports whether a source (a slimmed object from the cache, which
// keeps the annotation) carries hasher.IgnoreAnnotation. Its events
// concern no reader: its content is in no checksum.
func ignored(obj client.Object) bool {
	return hasher.IgnoredBy(obj.GetAnnotations())
}

// keepAcrossIgnore reports whether a stamp that differs from fresh is kept
// because of the ignore annotation rather than replaced. Adding or removing
// the annotation changes the pre-image, but it must roll nothing by itself,
// so the hook leaves such stamps until a source that counts changes:
//
//   - The stamp is what the sources give now but for one source whose
//     annotation was toggled since (hasher.StoredBeforeIgnoreToggle): kept,
//     on a live change as on a re-check.
//   - On a re-check (the start-up replay, a template write), a workload
//     that reads an ignored source is kept too: an ignored source whose
//     content changed after the annotation was added leaves a stamp that
//     cannot be told from one whose counted sources changed while no one
//     was looking, and its changes must never roll anyone. A live change
//     to a source that counts re-stamps it.
func (r *reconciler) keepAcrossIgnore(ctx context.Context, req Request, refs []hasher.Reference, lookup hasher.Lookup, stored string) (bool, error) {
	toggled, err := hasher.StoredBeforeIgnoreToggle(r.key, req.Namespace, refs, lookup, stored)
	if err != nil {
		return false, fmt.Errorf("checking for an ignore toggle: %w", err)
	}
	if toggled {
		r.metrics.kept(req.Kind, keptIgnoreToggled)
		log.FromContext(ctx).Info("stamp differs only because a source's ignore annotation was added or removed; keeping it")
		return true, nil
	}
	if !req.Recheck {
		return false, nil
	}
	reads, err := hasher.ReadsIgnored(refs, lookup)
	if err != nil {
		return false, fmt.Errorf("checking for ignored sources: %w", err)
	}
	if reads {
		r.metrics.kept(req.Kind, keptIgnoredSource)
		log.FromContext(ctx).Info("stamp differs and the workload reads an ignored source; keeping it until a source that counts changes")
	}
	return reads, nil
}
