package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/workload"
)

// Lookuper gives the hasher access to a namespace's sources.
type Lookuper interface {
	Lookup(ctx context.Context, namespace string) hasher.Lookup
}

// prefetcher is a Lookuper that can read a template's sources at once
// before the lookup reads them one by one (sources.Reader.Prefetch).
type prefetcher interface {
	Prefetch(ctx context.Context, namespace string, refs []hasher.Reference)
}

// Handler stamps pod templates. It implements admission.Handler.
type Handler struct {
	// Key is the HMAC key shared by all replicas.
	Key []byte
	// Sources reads config content, normally the slimmed cache.
	Sources Lookuper
	// Decoder decodes admission objects.
	Decoder admission.Decoder
	// Metrics, when set, counts answers and checksum computations.
	Metrics *Metrics
	// Policy says which namespaces the handler serves, and Namespaces reads
	// them (normally the cache, with a live read on a miss). The handler
	// applies the policy itself: the webhook configuration's
	// namespaceSelector binds only the apiserver, not other callers.
	Policy     injection.Policy
	Namespaces injection.Getter
	// Kinds are the kinds stamped (workload.NewRegistry resolves them).
	Kinds workload.Registry
	// Callers, when set, limits every answer that depends on the request
	// to the apiserver, identified by its client certificate; the HTTP
	// handler must be wrapped by Callers.Identify.
	Callers *Callers
	// Revisions, set with --pinning, tells a rollback of a pinned
	// workload from an edit (rollback.go); nil: every write is stamped as
	// an edit.
	Revisions Revisions
}

// Handle answers one admission request.
func (h *Handler) Handle(ctx context.Context, req admission.Request) admission.Response {
	resp, o := h.handle(ctx, req)
	h.Metrics.answer(o)
	return resp
}

// handle answers req and says, for the answers metric, what it did. The
// outcome is decided where the answer is made, never read back from the
// answer's message.
func (h *Handler) handle(ctx context.Context, req admission.Request) (admission.Response, outcome) {
	if req.UID == "" {
		return admission.Errored(http.StatusBadRequest, errors.New("AdmissionReview has no request uid")), answerError
	}
	if h.rejects(ctx) {
		return unauthenticated()
	}
	// First, before decoding or looking anything up: in a namespace it does
	// not serve, the handler says nothing that depends on the request.
	if !h.serves(ctx, req.Namespace) {
		return admission.Allowed(notServedMessage), answerUnchanged
	}
	kind, ok := h.Kinds.Of(schema.GroupVersionKind(req.Kind))
	if !ok {
		return admission.Allowed(fmt.Sprintf("confighash does not stamp %s", req.Kind.Kind)), answerUnchanged
	}
	if req.Operation != admissionv1.Create && (req.Operation != admissionv1.Update || !kind.Mutable) {
		return admission.Allowed(""), answerUnchanged
	}
	obj, err := h.decode(kind, req.Object)
	if err != nil {
		return unhandled(ctx, fmt.Errorf("decoding %s: %w", kind.GVK.Kind, err), "decoding the object"), answerError
	}
	reads := workload.ReadsOf(kind, obj)
	switch reads.Skip {
	case workload.SkipOptedOut:
		return h.optedOut(ctx, kind, reads.Template, req)
	case workload.SkipOwned:
		// Created from a template that was stamped already.
		return admission.Allowed("owned by a controller; its template carries the stamp"), answerUnchanged
	case workload.SkipNoTemplate:
		// A Rollout that reads a Deployment's template (workloadRef), or a
		// custom object without one: the pods' template lives elsewhere.
		return admission.Allowed("no pod template to stamp"), answerUnchanged
	}
	// Over the sources limit (workload.SkipOverLimit) is answered by
	// checksum, which keeps the stored stamp and says why.
	t := reads.Template

	var old *workload.Template
	// edits keep the hook's records as they were (records.go); every
	// answer to an UPDATE below carries them.
	var edits recordEdits
	if req.Operation == admissionv1.Update {
		oldObj, err := h.decode(kind, req.OldObject)
		if err != nil {
			return unhandled(ctx, fmt.Errorf("decoding old %s: %w", kind.GVK.Kind, err), "decoding the old object"), answerError
		}
		edits = h.keptRecords(kind, oldObj, obj, req)
		// An old object without a template (a custom object that just got
		// one) is a template change like any other.
		if ot, ok := kind.PodTemplate(oldObj); ok {
			old = &ot
			if workload.SameTemplate(ot, t) {
				if t.Checksum() != ot.Checksum() {
					// Back to a revision that differs only in the stamp
					// (the undo of a config-only change)?
					fresh := func(ctx context.Context) (string, bool) {
						sum, _, err := h.checksum(sources.PreferLive(ctx), req.Namespace, reads, old)
						return sum, err == nil
					}
					if resp, o, ok := h.rollback(ctx, kind, obj, reads, edits, req, fresh); ok {
						return resp, o
					}
				}
				if resp, o, ok := keepStamp(kind, ot, t, req); ok {
					return edits.onto(resp, obj.GetAnnotations()), o
				}
			}
		}
	}

	switch {
	case req.DryRun != nil && *req.DryRun:
		// A dry-run changes nothing: the cache is good enough, and no one
		// allowed only to dry-run may turn admissions into live reads.
		ctx = sources.CacheOnly(ctx)
	case kind.Mutable:
		// A new or changed template of a kind the hook re-stamps (a
		// metadata-only change such as kubectl rollout restart included):
		// this stamp rolls the pods, so read the sources live, within the
		// live-read budget. A cache that has not yet seen a config write
		// made a moment before (Helm writes the ConfigMap, then the
		// Deployment) would stamp the old content, and the hook's
		// correction would be a second rollout.
		ctx = sources.PreferLive(ctx)
	}
	sum, warnings, err := h.checksum(ctx, req.Namespace, reads, old)
	if err != nil {
		// An unreadable cache must not block the cluster: keep what the
		// object has. The error stays in the log; it may name a Secret.
		return unhandled(ctx, err, "computing checksum"), answerError
	}
	if sum == t.Checksum() {
		return edits.onto(admission.Allowed("stamp up to date"), obj.GetAnnotations()).WithWarnings(warnings...), answerUnchanged
	}
	if old != nil {
		// Back to a revision whose template differs in more than the
		// stamp (the undo of an image and config change)?
		fresh := func(context.Context) (string, bool) { return sum, true }
		if resp, o, ok := h.rollback(ctx, kind, obj, reads, edits, req, fresh); ok {
			return resp, o
		}
	}
	return edits.onto(stampPatch(kind, t, sum, "stamped"), obj.GetAnnotations()).WithWarnings(warnings...), answerStamped
}

const restoredMessage = "restored the stored stamp"

// keptStampWarning is shown (kubectl prints admission warnings) when a write
// tried to set a stamp without changing the template.
var keptStampWarning = workload.Warning("kept the stored " + contract.ChecksumAnnotation +
	"; the stamp follows the content of the ConfigMaps and Secrets the pods read, so this write rolls nothing (change the config, or the template, to roll)")

// keepStamp handles a write that leaves the template as it was, apart from
// the stamp. Such a write must not roll anything, so no checksum is computed:
// only confighash itself (the hook's re-stamp) may change the stamp, and a
// stamp anyone else dropped or changed is put back. Without that, a manifest
// holding a stamp copied from a live object would roll pods back to an old
// ReplicaSet on every sync, under a stamp that no longer says what they read.
// ok is false for the one case left to the caller: someone else stamping an
// unstamped template, which gets a fresh checksum like any template change,
// and a stored stamp confighash does not write (foreign), which is no stamp:
// a fresh one replaces it, on a write that changes nothing else too.
// The request's options are decoded only when the stamp changed: the common
// no-op write (a re-apply) costs no extra parsing.
func keepStamp(kind workload.Kind, old, t workload.Template, req admission.Request) (resp admission.Response, o outcome, ok bool) {
	switch {
	case t.Checksum() == old.Checksum() && !foreign(old.Checksum()):
		return admission.Allowed("template unchanged"), answerUnchanged, true
	case currentFormat(t.Checksum()) && writtenByConfighash(req):
		return admission.Allowed("re-stamped by confighash"), answerUnchanged, true
	case old.Checksum() == "" || foreign(old.Checksum()):
		return admission.Response{}, "", false
	case t.Checksum() == "":
		// Dropped: kubectl replace, server-side apply of a manifest without
		// it. Routine, so no warning.
		return stampPatch(kind, t, old.Checksum(), restoredMessage), answerRestored, true
	default:
		// Changed: a manifest with a copied stamp, or kubectl rollout undo
		// to a revision that differs only in the stamp. Say why nothing
		// rolls; the pods would read the same content either way.
		return stampPatch(kind, t, old.Checksum(), restoredMessage).WithWarnings(keptStampWarning), answerRestored, true
	}
}

// writtenByConfighash reports whether the write names confighash's field
// manager. This tells the hook's re-stamp from other writes; it is not a
// security boundary (anyone who may update a workload may roll it anyway).
func writtenByConfighash(req admission.Request) bool {
	return fieldManager(req) == contract.FieldManager
}

// fieldManager is the field manager the write names; "" when it names none
// (options are absent on some requests; then none is named).
func fieldManager(req admission.Request) string {
	var opts struct {
		FieldManager string `json:"fieldManager"`
	}
	_ = json.Unmarshal(req.Options.Raw, &opts)
	return opts.FieldManager
}

// checksum computes the stamp for a new or changed template. On UPDATE with
// a required source missing it returns the previous stamp: the template
// change rolls the pods anyway, and a fresh stamp would only record a config
// that is gone. A previous stamp confighash does not write is not kept.
// reads is the new template's (workload.ReadsOf), which the caller has
// found to have one, not opted out.
func (h *Handler) checksum(ctx context.Context, ns string, reads workload.Reads, old *workload.Template) (string, []string, error) {
	t := reads.Template
	var warnings []string
	if reads.RefErr != nil {
		warnings = append(warnings, workload.Warning(oneLine(reads.RefErr)))
	}
	if reads.Skip == workload.SkipOverLimit {
		return unchanged(t, old), append(warnings, workload.Warning(reads.LimitMessage())), nil
	}
	h.Metrics.checksum()
	if p, ok := h.Sources.(prefetcher); ok {
		p.Prefetch(ctx, ns, reads.Refs)
	}
	res, err := hasher.Checksum(h.Key, ns, reads.Refs, h.Sources.Lookup(ctx, ns))
	if notHeld := (*sources.NotHeldError)(nil); errors.As(err, &notHeld) {
		// Content the cache does not hold is never hashed as if absent:
		// the template is left as it is, as over the sources bound.
		return unchanged(t, old), append(warnings, workload.Warning(notHeldMessage(notHeld))), nil
	}
	if err != nil {
		return "", nil, err
	}
	if len(res.Missing) > 0 {
		names := make([]string, len(res.Missing))
		for i, s := range res.Missing {
			names[i] = s.String()
		}
		msg := workload.Warning("required sources missing: " + strings.Join(names, ", "))
		if old != nil && !foreign(old.Checksum()) {
			return old.Checksum(), append(warnings, msg+"; keeping the previous stamp"), nil
		}
		warnings = append(warnings, msg)
	}
	return res.Checksum, warnings, nil
}

// unchanged is the stamp of a template the handler does not stamp (over a
// bound, or reading content the cache does not hold): on UPDATE the stored
// one, which a manifest that drops the stamp would otherwise lose (and the
// hook's later stamp would roll the pods a second time), else the one it
// carries; never one confighash does not write (foreign), which is no stamp.
func unchanged(t workload.Template, old *workload.Template) string {
	if old != nil && !foreign(old.Checksum()) && old.Checksum() != "" {
		return old.Checksum()
	}
	if foreign(t.Checksum()) {
		return ""
	}
	return t.Checksum()
}

// notHeldMessage names the source and the bound, never content. The
// caller may create pods in the namespace, and so read the source anyway.
func notHeldMessage(e *sources.NotHeldError) string {
	switch e.Reason {
	case sources.TooManyKeys:
		return fmt.Sprintf("%s has more keys than the limit of --max-source-keys; not stamped", e.Source)
	case sources.Unconfirmed:
		return fmt.Sprintf("%s was not found a moment ago; not stamped, the next change of the template or of its sources stamps it", e.Source)
	}
	return fmt.Sprintf("%s is not cached yet (its namespace became served a moment ago); not stamped, the next change of the template or of its sources stamps it", e.Source)
}

// oneLine flattens errors.Join output, since a warning is one header line.
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}
