package preview

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/health"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/kindcheck"
	"github.com/confighash/confighash/internal/pinning"
	"github.com/confighash/confighash/internal/status"
	"github.com/confighash/confighash/internal/window"
	"github.com/confighash/confighash/internal/workload"
)

// Options say how the confighash previewed is configured.
type Options struct {
	// Kinds are the kinds it serves (workload.NewRegistry, with its
	// --workload-kind); required. Only the mutable ones are re-stamped.
	Kinds workload.Registry
	// Policy is its namespace policy (injection.New with its namespace and
	// --namespaces).
	Policy injection.Policy
	// MaxKeys is its --max-source-keys; 0 for the default.
	MaxKeys int
	// KindChecker tells which custom kinds the hook refuses to watch (and
	// so never re-stamps), as for status; nil checks none.
	KindChecker status.KindChecker
	// Windows are the hook's --rollout-window and --freeze.
	Windows window.Cluster
}

// Gather reads, through c, what Compute needs to preview in as applied to
// namespace: the namespace, the live source, the workloads there that read
// it and their other sources. It takes a client.Reader: it cannot write.
func Gather(ctx context.Context, c client.Reader, in *Input, namespace string, o Options) (*Facts, error) {
	if len(o.Kinds) == 0 {
		return nil, errors.New("no workload kinds (Options.Kinds)")
	}
	f := &Facts{Namespace: namespace, Source: in.Source, Others: map[hasher.Source]Other{}, Now: time.Now(),
		Windows: o.Windows, SourceAnnotations: in.Object.GetAnnotations()}
	var err error
	var ns *corev1.Namespace
	if f.Served, ns, err = o.Policy.CheckNamespace(ctx, c, namespace); err != nil {
		return nil, err
	}
	if f.Served.Serves && ns != nil {
		f.NamespacePins = pinning.NamespacePins(ns.Labels)
		f.SourcePin = pinning.SkipOf(sourceFacts(in.Source, in.Object))
		f.NamespaceAnnotations = ns.Annotations
	}
	if f.New, err = StateOf(in.Object, o.MaxKeys); err != nil {
		return nil, fmt.Errorf("digesting the input: %w", err)
	}
	live, found, err := getSource(ctx, c, namespace, in.Source, o.MaxKeys)
	if err != nil {
		return nil, err
	}
	if found {
		f.Live = &live
	}
	if f.Readers, err = readers(ctx, c, namespace, in.Source, o.Kinds); err != nil {
		return nil, err
	}
	f.Warnings = checkKinds(ctx, o.KindChecker, o.Kinds, f.Readers)
	for _, r := range f.Readers {
		for _, ref := range r.Refs {
			if _, done := f.Others[ref.Source]; done || ref.Source == in.Source {
				continue
			}
			st, found, err := getSource(ctx, c, namespace, ref.Source, o.MaxKeys)
			f.Others[ref.Source] = Other{Found: found, State: st, ReadErr: err}
		}
	}
	return f, nil
}

// getSource reads src live. A source being deleted counts as absent, as it
// does for the webhook and the hook.
func getSource(ctx context.Context, c client.Reader, namespace string, src hasher.Source, maxKeys int) (SourceState, bool, error) {
	var obj client.Object = &corev1.ConfigMap{}
	if src.Kind == hasher.Secret {
		obj = &corev1.Secret{}
	}
	err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: src.Name}, obj)
	switch {
	case apierrors.IsNotFound(err):
		return SourceState{}, false, nil
	case err != nil:
		return SourceState{}, false, fmt.Errorf("reading %s in %s: %w", src, namespace, err)
	case obj.GetDeletionTimestamp() != nil:
		return SourceState{}, false, nil
	}
	st, err := StateOf(obj, maxKeys)
	if err != nil {
		return SourceState{}, false, fmt.Errorf("digesting %s in %s: %w", src, namespace, err)
	}
	return st, true, nil
}

// readers lists the workloads of the mutable kinds of reg in namespace
// whose template reads src, by workload.ReadsOf, sorted by kind then name.
func readers(ctx context.Context, c client.Reader, namespace string, src hasher.Source, reg workload.Registry) ([]Reader, error) {
	var out []Reader
	for _, k := range reg.Mutable() {
		list := k.NewList()
		err := c.List(ctx, list, client.InNamespace(namespace))
		if k.Unstructured() && meta.IsNoMatchError(err) {
			continue // the CRD is not installed: there are none
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s in %s: %w", k.Resource, namespace, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, fmt.Errorf("reading the %s list: %w", k.Resource, err)
		}
		for _, item := range items {
			obj, ok := item.(client.Object)
			if !ok {
				return nil, fmt.Errorf("list item %T is not an object", item)
			}
			if r, ok := readerOf(k, obj, src); ok {
				if r.NoPod == "" {
					r.Failing = failingBefore(ctx, c, k, obj)
				}
				out = append(out, r)
			}
		}
	}
	slices.SortFunc(out, func(a, b Reader) int {
		if c := strings.Compare(a.KindName, b.KindName); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

// readerOf says whether obj, of kind k, reads src, and how.
func readerOf(k workload.Kind, obj client.Object, src hasher.Source) (Reader, bool) {
	reads := workload.ReadsOf(k, obj)
	r := Reader{KindName: k.Name(), Name: obj.GetName(), Annotations: obj.GetAnnotations(),
		Refs: reads.Refs, Skip: reads.Skip, Deleting: obj.GetDeletionTimestamp() != nil,
		Stamp: reads.Template.Checksum()}
	r.NoPod, _ = health.NothingToRun(k, obj)
	r.PinOff = !pinning.WorkloadPins(obj.GetAnnotations()) || (reads.Template.Meta != nil && !pinning.WorkloadPins(reads.Template.Meta.Annotations))
	if slices.ContainsFunc(reads.Refs, func(ref hasher.Reference) bool { return ref.Source == src }) {
		return r, true
	}
	if reads.Template.Spec == nil {
		return Reader{}, false
	}
	// Read by the spec, dropped by confighash.dev/exclude: a reader that
	// does not roll, and says why.
	spec, _ := hasher.References(reads.Template.Spec, nil)
	if slices.ContainsFunc(spec, func(ref hasher.Reference) bool { return ref.Source == src }) {
		r.Excluded = true
		return r, true
	}
	return Reader{}, false
}

// checkKinds asks c, once per custom kind among rs, whether the hook
// watches it, and marks the readers of a kind it refuses. A check that
// fails is a warning: the readers are shown as if the kind were watched.
func checkKinds(ctx context.Context, c status.KindChecker, reg workload.Registry, rs []Reader) []string {
	if c == nil {
		return nil
	}
	var warnings []string
	refused := map[string]string{}
	checked := map[string]bool{}
	for _, k := range reg {
		name := k.Name()
		if !k.Unstructured() || checked[name] || !slices.ContainsFunc(rs, func(r Reader) bool { return r.KindName == name }) {
			continue
		}
		checked[name] = true
		_, err := c.Served(ctx, k)
		var pe *kindcheck.PathError
		switch {
		case errors.As(err, &pe):
			refused[name] = err.Error()
		case err != nil:
			warnings = append(warnings, "cannot tell whether the hook watches "+name+": "+err.Error())
		}
	}
	for i := range rs {
		rs[i].NotWatched = refused[rs[i].KindName]
	}
	return warnings
}

// sourceFacts is what the pinning policy needs of the input: a change
// applied as the input is, so its annotations and type are the ones that
// count.
func sourceFacts(src hasher.Source, obj client.Object) pinning.SourceFacts {
	f := pinning.SourceFacts{Source: src, Found: true, Annotations: obj.GetAnnotations()}
	if s, ok := obj.(*corev1.Secret); ok {
		f.SecretType = s.Type
	}
	return f
}
