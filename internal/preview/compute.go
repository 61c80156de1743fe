package preview

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/internal/waves"
	"github.com/confighash/confighash/internal/workload"
)

// Compute previews the change f describes: for each reader, the checksum
// it gets with the live source and the one it gets with the input's, under
// key. Any key does: only whether the two are equal matters, and an HMAC
// under one key is equal for two inputs exactly when it is under another
// (up to collisions of SHA-256). So the preview needs no access to
// confighash's own key, and key never leaves the process. maxWaveSize is
// the hook's --max-wave-size (0: no waves, every reader at once). Compute is pure: it reads nothing but f.
func Compute(f *Facts, key []byte, maxWaveSize int) (*Report, error) {
	if len(key) == 0 {
		return nil, errors.New("preview: empty key")
	}
	rep := &Report{
		SchemaVersion: SchemaVersion, Source: f.Source.String(), Namespace: f.Namespace,
		Create: f.Live == nil, Served: f.Served.Serves, ServedReason: f.Served.Reason,
		MaxWaveSize: max(maxWaveSize, 0), Rolling: []Rolling{}, NotRolling: []NotRolling{},
	}
	var before hasher.Content
	if f.Live != nil {
		before = f.Live.Content
	}
	if (f.Live == nil || f.Live.Err == nil) && f.New.Err == nil {
		rep.ChangedKeys = diffKeys(before, f.New.Content, hasher.Reference{AllKeys: true})
	}
	if rep.ChangedKeys == nil {
		rep.ChangedKeys = []KeyChange{}
	}
	all, allWhy := wholeChange(f, rep)
	if rep.Create {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s does not exist in %s yet: applying the input creates it", rep.Source, f.Namespace))
	}
	if allWhy != "" {
		rep.Notes = append(rep.Notes, all)
	}
	rep.Notes = append(rep.Notes, f.Warnings...)

	var members []waves.Member
	for _, r := range f.Readers {
		order, err := waves.OrderOf(r.Annotations)
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s/%s: %v; it sorts as 0", strings.ToLower(r.KindName), r.Name, err))
		}
		w := Workload{Ref: strings.ToLower(r.KindName) + "/" + r.Name, Kind: r.KindName, Name: r.Name, Order: order}
		why, reason, keys := allWhy, all, []KeyChange(nil)
		if why == "" {
			why, reason, keys = readerChange(f, r, key, rep.Create || len(rep.ChangedKeys) > 0)
		}
		if why != "" {
			rep.NotRolling = append(rep.NotRolling, NotRolling{Workload: w, Why: why, Reason: reason})
			continue
		}
		// A reader failing before the change goes at once, unjudged, as
		// the hook sends it (docs/waves.md).
		pace := waves.PaceOf(r.Annotations, f.New.WavesOff, rep.MaxWaveSize, r.NoPod != "")
		roll := Rolling{Workload: w, Keys: keys, Reason: reason, NoPod: r.NoPod, Failing: r.Failing,
			AtOnce: pace != waves.InWaves || r.Failing != ""}
		if roll.Keys == nil {
			roll.Keys = []KeyChange{}
		}
		roll.Waits = waitsFor(r.Annotations, f.Now)
		d := f.windowOf(r)
		setWhen(&roll, d)
		rep.Notes = windowNotes(rep.Notes, d)
		roll.Pinned = f.NamespacePins && f.SourcePin == pinning.Pinned && !r.PinOff
		rep.Rolling = append(rep.Rolling, roll)
		if !roll.AtOnce {
			members = append(members, memberOf(f.Namespace, w, roll.Later))
		}
	}
	if note := pinningNote(f, rep); note != "" {
		rep.Notes = append(rep.Notes, note)
	}
	if f.New.WavesOff && len(rep.Rolling) > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the input carries %s=%s: every reader rolls at once, outside the waves", contract.WavesAnnotation, contract.WavesOff))
	}

	plan := waves.Plan(members, rep.MaxWaveSize)
	rep.Waves = len(plan)
	wave := map[waves.Member]int{}
	for i, ms := range plan {
		for _, m := range ms {
			wave[m] = i + 1
		}
	}
	for i := range rep.Rolling {
		if r := &rep.Rolling[i]; !r.AtOnce {
			r.Wave = wave[memberOf(f.Namespace, r.Workload, r.Later)]
		}
	}
	slices.SortStableFunc(rep.Rolling, func(a, b Rolling) int {
		if a.Wave != b.Wave {
			return a.Wave - b.Wave // at once (0) first
		}
		// Within a wave as the hook takes them; those at once by name.
		return waves.Compare(memberOf(f.Namespace, a.Workload, a.Later && a.Wave > 0), memberOf(f.Namespace, b.Workload, b.Later && b.Wave > 0))
	})
	slices.SortStableFunc(rep.NotRolling, func(a, b NotRolling) int {
		return waves.Compare(memberOf(f.Namespace, a.Workload, false), memberOf(f.Namespace, b.Workload, false))
	})
	return rep, nil
}

func memberOf(namespace string, w Workload, later bool) waves.Member {
	return waves.Member{KindName: w.Kind, Namespace: namespace, Name: w.Name, Order: w.Order, Later: later}
}

// wholeChange says why no reader at all rolls, or "" when each is to be
// looked at.
func wholeChange(f *Facts, rep *Report) (string, Why) {
	switch {
	case !f.Served.Serves:
		return f.Served.Reason + ": confighash rolls nothing there", WhyNotServed
	case f.Live != nil && f.Live.Content.Ignored:
		return fmt.Sprintf("the live %s carries %s=%s: neither its content nor adding or removing the annotation rolls anyone",
			rep.Source, contract.IgnoreAnnotation, contract.IgnoreTrue), WhyIgnored
	case f.New.Content.Ignored:
		return fmt.Sprintf("the input carries %s=%s: neither its content nor adding the annotation rolls anyone",
			contract.IgnoreAnnotation, contract.IgnoreTrue), WhyIgnored
	case f.New.Err != nil:
		return "the input has more keys than the hook holds per source (--max-source-keys): it re-stamps none of its readers", WhyTooLarge
	case f.Live != nil && f.Live.Err != nil:
		return fmt.Sprintf("the live %s has more keys than the hook holds per source (--max-source-keys): what changes cannot be told", rep.Source), WhyUnknown
	case f.Live != nil && f.Live.Immutable && len(rep.ChangedKeys) > 0:
		return fmt.Sprintf("the live %s is immutable: the apiserver refuses a change to its content", rep.Source), WhyImmutable
	}
	return "", ""
}

// readerChange says whether r rolls: "" and the keys it reads that change
// (and a reason when it rolls for another one), or why not. changed says
// whether the source's content changes at all: only then does the hook
// look at its readers.
func readerChange(f *Facts, r Reader, key []byte, changed bool) (Why, string, []KeyChange) {
	switch {
	case r.Deleting:
		return WhyDeleting, "being deleted", nil
	case r.Skip == workload.SkipOptedOut:
		return WhySkipped, fmt.Sprintf("opted out (%s=%s)", contract.InjectionAnnotation, contract.InjectionDisabled), nil
	case r.Skip != workload.NotSkipped:
		return WhySkipped, string(r.Skip) + ": confighash does not stamp it", nil
	case r.NotWatched != "":
		return WhyNotWatched, "the hook does not watch its kind: " + r.NotWatched, nil
	case r.Excluded:
		return WhyExcluded, fmt.Sprintf("its %s drops %s", contract.ExcludeAnnotation, f.Source), nil
	}
	var beforeFound bool
	before := SourceState{}
	if f.Live != nil {
		before, beforeFound = *f.Live, true
	}
	was, err := hasher.Checksum(key, f.Namespace, r.Refs, f.lookup(before, beforeFound))
	if err == nil {
		var now hasher.Result
		if now, err = hasher.Checksum(key, f.Namespace, r.Refs, f.lookup(f.New, true)); err == nil {
			return rolls(f, r, before.Content, was, now, changed)
		}
	}
	if notHeld := (*sources.NotHeldError)(nil); errors.As(err, &notHeld) && notHeld.Reason == sources.TooManyKeys {
		return WhyTooLarge, fmt.Sprintf("%s has more keys than the hook holds per source (--max-source-keys)", notHeld.Source), nil
	}
	return WhyUnknown, "cannot tell: " + err.Error(), nil
}

// rolls compares r's checksums with the live source (was) and with the
// input's (now). A reader whose read keys do not change still rolls when
// its stamp is missing or not of the current format and the source
// changes: the hook, looking at every reader of a changed source, stamps
// it afresh (a stamp of the current format that is stale already cannot be
// told without confighash's key; status tells it).
func rolls(f *Facts, r Reader, before hasher.Content, was, now hasher.Result, changed bool) (Why, string, []KeyChange) {
	if len(now.Missing) > 0 {
		names := make([]string, len(now.Missing))
		for i, s := range now.Missing {
			names[i] = s.String()
		}
		return WhyMissingSource, fmt.Sprintf("required %s missing: the hook keeps the stamp until it exists", strings.Join(names, ", ")), nil
	}
	i := slices.IndexFunc(r.Refs, func(ref hasher.Reference) bool { return ref.Source == f.Source })
	ref := r.Refs[i] // Gather keeps the readers that read it, or excluded ones
	if was.Checksum == now.Checksum && changed {
		if r.Stamp == "" {
			return "", "not stamped yet: the hook stamps it when a source it reads changes", nil
		}
		if _, ok := hasher.StampKeyID(r.Stamp); !ok {
			return "", "its stamp is of an old format: the hook re-stamps it when a source it reads changes", nil
		}
	}
	if was.Checksum == now.Checksum {
		reads := fmt.Sprintf("all of %s, whose content does not change", f.Source)
		switch {
		case ref.AllKeys:
		case len(ref.Keys) == 1:
			reads = fmt.Sprintf("key %s of %s, which does not change", ref.Keys[0], f.Source)
		default:
			reads = fmt.Sprintf("keys %s of %s, which do not change", strings.Join(ref.Keys, ", "), f.Source)
		}
		return WhyUnchanged, "reads " + reads, nil
	}
	return "", "", diffKeys(before, f.New.Content, ref)
}

// lookup is the hasher's lookup with the source as st (absent unless
// found) and every other source as it is.
func (f *Facts) lookup(st SourceState, found bool) hasher.Lookup {
	return func(s hasher.Source) (hasher.Content, bool, error) {
		if s == f.Source {
			if !found {
				return hasher.Content{}, false, nil
			}
			return st.Content, true, st.Err
		}
		o, ok := f.Others[s]
		switch {
		case !ok:
			return hasher.Content{}, false, fmt.Errorf("%s was not read", s)
		case o.ReadErr != nil:
			return hasher.Content{}, false, o.ReadErr
		case !o.Found:
			return hasher.Content{}, false, nil
		}
		return o.State.Content, true, o.State.Err
	}
}

// waitsFor says what in a reader's own annotations keeps the hook from
// re-stamping it when its turn comes, or "". A flap hold in force: it
// takes the latest content once its sources have gone unchanged for the
// hold's quiet time. A halt it carries keeps it from no change: the new
// content supersedes a halt of this source, and the reader that halted
// another source's change already runs that content, so its re-stamp
// spreads nothing (docs/waves.md, "Lifting a halt"). Preview has no key: a
// value only the key refuses is taken as the hook's (unverified). Only
// names and reasons are said, never a change's digest.
func waitsFor(ann map[string]string, now time.Time) string {
	var waits []string
	hold := waves.HoldOf(ann, func(v string) (contract.Hold, error) { return contract.ReadHoldUnverified(v, now, 0) })
	if hold.Waits() {
		waits = append(waits, fmt.Sprintf("on a flap hold since %s (unverified): it rolls once its sources have gone unchanged for %s",
			hold.Record.Since.UTC().Format(time.RFC3339), hold.Record.Quiet))
	}
	return strings.Join(waits, "; ")
}

// pinningNote says what pinning means for this change, in a namespace that
// pins: readers marked pinned keep the old content until re-stamped, or
// the source is not pinned at all, and why.
func pinningNote(f *Facts, rep *Report) string {
	if !f.NamespacePins || len(rep.Rolling) == 0 {
		return ""
	}
	if f.SourcePin != pinning.Pinned {
		return fmt.Sprintf("the namespace pins, but %s is not pinned (%s): every pod of its readers that starts reads the new content, whatever its wave", rep.Source, f.SourcePin)
	}
	return "the namespace pins: a reader marked pinned keeps every pod it starts on the old content until the hook re-stamps it"
}
