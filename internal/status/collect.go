package status

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/window"
	"github.com/confighash/confighash/internal/workload"
)

// Options select what Collect reports on.
type Options struct {
	// Target narrows the report to one kind and/or name; the zero Target
	// means every workload.
	Target Target
	// Namespace is where to look, unless AllNamespaces is set.
	Namespace     string
	AllNamespaces bool
	// ConfighashNamespace is where confighash runs. The webhook never
	// stamps workloads there (nor in kube-system).
	ConfighashNamespace string
	// ServedNamespaces are the only namespaces a namespaced-mode
	// confighash serves (its --namespaces); empty means every labelled one.
	ServedNamespaces []string
	// Stamper obtains the stamps the sources give now; nil means a
	// DryRunStamper with the same client.
	Stamper Stamper
	// Parallel bounds the concurrent dry-runs; 0 means 8.
	Parallel int
	// Kinds are the kinds confighash serves, with those its
	// --workload-kind adds (workload.NewRegistry resolves them); required.
	Kinds workload.Registry
	// KindChecker tells which custom kinds the hook refuses to watch; nil
	// checks none.
	KindChecker KindChecker
	// Windows are the hook's --rollout-window and --freeze.
	Windows window.Cluster
	// NoWaves: the hook runs without waves (--max-wave-size=0), so no halt
	// holds a reader back, its own or another's.
	NoWaves bool
	// Now is the instant the report is made at; zero means time.Now().
	Now time.Time
}

// NotFoundError is returned when a named workload does not exist.
type NotFoundError struct {
	Target    Target
	Namespace string
	// Kinds are the kinds looked for.
	Kinds workload.Registry
}

func (e *NotFoundError) Error() string {
	what := e.Target.String()
	if e.Target.KindName == "" {
		what = "no " + orList(kindNames(e.Kinds)) + " " + what
	} else {
		what += " not found"
	}
	return fmt.Sprintf("%s in namespace %s", what, e.Namespace)
}

// Collect reports on the workloads o selects. It reads workloads (and,
// for the halts of a named workload's fellow readers, the metadata of its
// namespace's workloads), namespaces, source metadata, Events and, in
// namespaces that pin, one page of each workload's pods' metadata with c,
// and gets fresh stamps
// from o.Stamper; it never reads a ConfigMap's or Secret's content.
// Problems confined to one workload are reported in it rather than failing
// the whole call.
func Collect(ctx context.Context, c client.Client, o Options) (*Report, error) {
	if len(o.Kinds) == 0 {
		return nil, errors.New("no workload kinds to report on (Options.Kinds)")
	}
	if o.Stamper == nil {
		o.Stamper = DryRunStamper{Client: c, Kinds: o.Kinds}
	}
	ns := o.Namespace
	if o.AllNamespaces {
		if o.Target.Name != "" {
			return nil, errors.New("a workload cannot be named across all namespaces")
		}
		ns = ""
	}
	objs, err := listWorkloads(ctx, c, o.Target, ns, o.Kinds)
	if err != nil {
		return nil, err
	}
	if o.Target.Name != "" && len(objs) == 0 {
		return nil, &NotFoundError{Target: o.Target, Namespace: ns, Kinds: o.Kinds}
	}

	events, eventsErr := listEvents(ctx, c, ns, o.Target.Name)
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	halts, haltsErr := newHaltIndex(now), error(nil)
	if !o.NoWaves {
		halts, haltsErr = indexHalts(ctx, c, o.Target, ns, o.Kinds, objs, now)
	}
	kinds := checkKinds(ctx, o.KindChecker, o.Kinds, objs)
	nss := newNamespaceReader(c)
	presence := newPresenceChecker(c)
	report := &Report{SchemaVersion: SchemaVersion, Workloads: make([]Workload, len(objs))}
	for i, obj := range objs {
		w := &report.Workloads[i]
		w.Kind = obj.GetObjectKind().GroupVersionKind().Kind
		w.Namespace, w.Name = obj.GetNamespace(), obj.GetName()
		k, _ := o.Kinds.For(obj) // listWorkloads lists o.Kinds only
		reads := workload.ReadsOf(k, obj)
		w.StampedChecksum = reads.Template.Checksum() // listWorkloads keeps only objects with a template
		w.Hold = holdOf(obj.GetAnnotations(), now)
		if !o.NoWaves {
			w.Halt = haltOf(obj.GetAnnotations(), now)
		}
		w.Rollout = rolloutOf(obj.GetAnnotations())
		kinds.fill(w, obj.GetObjectKind().GroupVersionKind())
		w.windowAnnotations = windowAnnotations(obj.GetAnnotations())
		labels, nsErr := nss.labels(ctx, w.Namespace)
		w.namespaceWindowAnnotations = nss.windowAnnotations(w.Namespace)
		w.Injection = injectionOf(w.Namespace, labels, nsErr, obj.GetAnnotations(), o.ConfighashNamespace, o.ServedNamespaces...)
		// What the template reads, whether or not confighash acts on it
		// (reads.Skip): injection says whether it does.
		if reads.RefErr != nil {
			w.Warnings = append(w.Warnings, strings.Split(reads.RefErr.Error(), "\n")...)
		}
		w.Sources = sourcesOf(reads.Refs)
		if w.Injection.State == InjectionOn && reads.Template.Meta != nil {
			w.Pinning = pinningOf(ctx, c, obj, w.StampedChecksum, labels, reads.Template.Meta.Annotations)
		}
		presence.fill(ctx, w.Namespace, w.Sources)
		if haltsErr != nil {
			w.Warnings = append(w.Warnings, haltsErr.Error()+"; waiting cannot be told from stale")
		} else {
			w.HaltedChanges = halts.of(w)
		}
		if eventsErr != nil {
			w.Warnings = append(w.Warnings, eventsErr.Error()+"; the last ConfigChanged, FlapHold and SourceMissing Events are not shown")
		} else {
			w.LastConfigChanged, w.LastFlapHold, w.LastSourceMissing = events.latest(w.Namespace, w.Kind, w.Name, obj.GetUID())
		}
	}
	stampAll(ctx, o, objs, report.Workloads)
	report.Summary = map[State]int{}
	for i := range report.Workloads {
		w := &report.Workloads[i]
		w.State, w.Reason = Classify(w, now, o.Windows)
		report.Summary[w.State]++
	}
	return report, nil
}

// listWorkloads gets the named workload of each kind t covers, or lists
// them all, in namespace ns ("" for all), sorted by namespace, kind and
// name. The objects carry their GroupVersionKind.
func listWorkloads(ctx context.Context, c client.Reader, t Target, ns string, reg workload.Registry) ([]client.Object, error) {
	kinds := t.kinds(reg)
	var out []client.Object
	for _, k := range kinds {
		if t.Name != "" {
			obj := k.New()
			err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: t.Name}, obj)
			if apierrors.IsNotFound(err) || (k.Unstructured() && meta.IsNoMatchError(err)) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("reading %s %s/%s: %w", k.GVK.Kind, ns, t.Name, err)
			}
			if _, ok := k.PodTemplate(obj); !ok {
				continue
			}
			obj.GetObjectKind().SetGroupVersionKind(k.GVK)
			out = append(out, obj)
			continue
		}
		list := k.NewList()
		if err := listKind(ctx, c, k, ns, list); err != nil {
			return nil, err
		}
		items, err := itemsOf(list)
		if err != nil {
			return nil, err
		}
		for _, obj := range items {
			if _, ok := k.PodTemplate(obj); !ok {
				continue // a Rollout reading a Deployment's template: that Deployment is listed
			}
			obj.GetObjectKind().SetGroupVersionKind(k.GVK)
			out = append(out, obj)
		}
	}
	order := map[string]int{}
	for i, k := range kinds {
		order[k.GVK.Kind] = i
	}
	slices.SortStableFunc(out, func(a, b client.Object) int {
		return cmp.Or(
			cmp.Compare(a.GetNamespace(), b.GetNamespace()),
			cmp.Compare(order[a.GetObjectKind().GroupVersionKind().Kind], order[b.GetObjectKind().GroupVersionKind().Kind]),
			cmp.Compare(a.GetName(), b.GetName()))
	})
	return out, nil
}

// itemsOf returns the items of a typed list.
func itemsOf(list client.ObjectList) ([]client.Object, error) {
	raw, err := meta.ExtractList(list)
	if err != nil {
		return nil, fmt.Errorf("reading list items: %w", err)
	}
	out := make([]client.Object, 0, len(raw))
	for _, o := range raw {
		obj, ok := o.(client.Object)
		if !ok {
			return nil, fmt.Errorf("list item %T is not an object", o)
		}
		out = append(out, obj)
	}
	return out, nil
}

// stampAll asks o.Stamper for the current stamp of every workload whose
// injection is not off, a few at a time, and records the answers in ws.
func stampAll(ctx context.Context, o Options, objs []client.Object, ws []Workload) {
	parallel := o.Parallel
	if parallel <= 0 {
		parallel = 8
	}
	sem := make(chan struct{}, parallel)
	var wg sync.WaitGroup
	for i, obj := range objs {
		w := &ws[i]
		if w.Injection.State == InjectionOff {
			continue
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			stamp(ctx, o.Stamper, obj, w)
		})
	}
	wg.Wait()
}

// stamp records in w what the stamper says about obj.
func stamp(ctx context.Context, s Stamper, obj client.Object, w *Workload) {
	sum, warnings, err := s.Stamp(ctx, obj)
	w.Warnings = append(w.Warnings, warnings...)
	switch {
	case apierrors.IsForbidden(err):
		w.Error = "asking the webhook for the current checksum: " + err.Error() +
			" (status needs permission to create the workload's kind, for a dry run that stores nothing)"
	case err != nil:
		w.Error = "asking the webhook for the current checksum: " + err.Error()
	case sum != "":
		w.ExpectedChecksum = sum
		if w.Injection.State == InjectionUnknown {
			w.Injection = Injection{InjectionOn, "the webhook stamped a dry-run copy (" + w.Injection.Reason + ")"}
		}
	case w.Injection.State == InjectionUnknown:
		w.Error = "the webhook did not stamp a dry-run copy, and whether it should cannot be told (" + w.Injection.Reason + ")"
	default:
		w.Error = "the webhook did not stamp a dry-run copy although injection is on: it is unreachable or failing " +
			"(failurePolicy Ignore admits writes unstamped); " + CheckInstallHint
	}
}

// namespaceReader reads namespaces' labels and window annotations once
// each.
type namespaceReader struct {
	c     client.Reader
	known map[string]namespaceResult
}

type namespaceResult struct {
	labels, window map[string]string
	err            error
}

func newNamespaceReader(c client.Reader) *namespaceReader {
	return &namespaceReader{c: c, known: map[string]namespaceResult{}}
}

func (r *namespaceReader) labels(ctx context.Context, name string) (map[string]string, error) {
	if res, ok := r.known[name]; ok {
		return res.labels, res.err
	}
	ns := &corev1.Namespace{}
	err := r.c.Get(ctx, client.ObjectKey{Name: name}, ns)
	res := namespaceResult{labels: ns.Labels, window: windowAnnotations(ns.Annotations), err: err}
	r.known[name] = res
	return res.labels, res.err
}

// windowAnnotations are the window annotations of a namespace labels read
// already; nil when it could not be read.
func (r *namespaceReader) windowAnnotations(name string) map[string]string {
	return r.known[name].window
}
