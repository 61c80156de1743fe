package hasher

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/internal/contract"
)

// TestPreimageIgnoredSource spells out an ignored source: kind, name, scope
// and state 2, with no entry count and no entries.
func TestPreimageIgnoredSource(t *testing.T) {
	x := DigestOf([]byte("1"))
	tests := map[string]struct {
		ref  Reference
		want []byte
	}{
		"whole object": {
			ref:  whole(ConfigMap, "a"),
			want: append(append([]byte{9}, "ConfigMap"...), 1, 'a', scopeAllKeys, stateIgnored),
		},
		"key list": {
			ref:  keyed(Secret, "s", "x"),
			want: append(append([]byte{6}, "Secret"...), 1, 's', scopeKeys, stateIgnored),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			head := append(append([]byte("confighash/v2\x00"), 4), "team"...)
			want := append(append(head, 1), tc.want...)
			pre := newPreimage("team", 1)
			pre.addSource(canonical([]Reference{tc.ref})[0], Content{Data: map[string]Digest{"x": x}, Ignored: true}, true)
			if got := pre.bytes(); !bytes.Equal(got, want) {
				t.Errorf("pre-image\n got %q\nwant %q", got, want)
			}
		})
	}
}

func TestChecksumIgnoredSource(t *testing.T) {
	key := []byte("k")
	refs := []Reference{whole(ConfigMap, "app"), whole(ConfigMap, "stamp")}
	app := Content{Data: map[string]Digest{"a": DigestOf([]byte("1"))}}
	sum := func(t *testing.T, stamp Content) string {
		t.Helper()
		objects := map[Source]Content{{ConfigMap, "app"}: app, {ConfigMap, "stamp"}: stamp}
		r, err := Checksum(key, "ns", refs, lookupFrom(objects))
		if err != nil {
			t.Fatal(err)
		}
		return r.Checksum
	}
	at := func(v string, ignored bool) Content {
		return Content{Data: map[string]Digest{"t": DigestOf([]byte(v))}, Ignored: ignored}
	}
	tests := map[string]struct {
		a, b Content
		same bool
	}{
		"an ignored source's content does not count":  {a: at("12:00", true), b: at("12:01", true), same: true},
		"ignoring a source changes the pre-image":     {a: at("12:00", false), b: at("12:00", true)},
		"a counted source's content counts":           {a: at("12:00", false), b: at("12:01", false)},
		"an ignored source differs from an empty one": {a: Content{Ignored: true}, b: Content{}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if a, b := sum(t, tc.a), sum(t, tc.b); (a == b) != tc.same {
				t.Errorf("equal = %v, want %v", a == b, tc.same)
			}
		})
	}
}

func TestIgnoredByAnnotation(t *testing.T) {
	tests := map[string]struct {
		annotations map[string]string
		want        bool
	}{
		"none":        {},
		"true":        {annotations: map[string]string{contract.IgnoreAnnotation: "true"}, want: true},
		"false":       {annotations: map[string]string{contract.IgnoreAnnotation: "false"}},
		"other value": {annotations: map[string]string{contract.IgnoreAnnotation: "yes"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			meta := metav1.ObjectMeta{Annotations: tc.annotations}
			if got := ConfigMapContent(&corev1.ConfigMap{ObjectMeta: meta}).Ignored; got != tc.want {
				t.Errorf("ConfigMapContent.Ignored = %v, want %v", got, tc.want)
			}
			if got := SecretContent(&corev1.Secret{ObjectMeta: meta}).Ignored; got != tc.want {
				t.Errorf("SecretContent.Ignored = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStoredBeforeIgnoreToggle(t *testing.T) {
	key := []byte("k")
	refs := []Reference{whole(ConfigMap, "app"), keyed(Secret, "tok", "t")}
	content := func(v string, ignored bool) Content {
		return Content{Data: map[string]Digest{"t": DigestOf([]byte(v))}, Ignored: ignored}
	}
	stamp := func(t *testing.T, app, tok Content) string {
		t.Helper()
		r, err := Checksum(key, "ns", refs, lookupFrom(map[Source]Content{{ConfigMap, "app"}: app, {Secret, "tok"}: tok}))
		if err != nil {
			t.Fatal(err)
		}
		return r.Checksum
	}
	tests := map[string]struct {
		thenApp, thenTok, nowApp, nowTok Content
		want                             bool
	}{
		"annotation added, content as it was": {
			thenApp: content("1", false), thenTok: content("a", false),
			nowApp: content("1", false), nowTok: content("a", true), want: true,
		},
		"annotation removed, content changed while ignored": {
			thenApp: content("1", false), thenTok: content("a", true),
			nowApp: content("1", false), nowTok: content("b", false), want: true,
		},
		"annotation added, then the ignored content changed": {
			thenApp: content("1", false), thenTok: content("a", false),
			nowApp: content("1", false), nowTok: content("b", true),
		},
		"annotation added and a counted source changed": {
			thenApp: content("1", false), thenTok: content("a", false),
			nowApp: content("2", false), nowTok: content("a", true),
		},
		"a counted source changed, nothing toggled": {
			thenApp: content("1", false), thenTok: content("a", true),
			nowApp: content("2", false), nowTok: content("a", true),
		},
		"two sources toggled at once": {
			thenApp: content("1", false), thenTok: content("a", false),
			nowApp: content("1", true), nowTok: content("a", true),
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stored := stamp(t, tc.thenApp, tc.thenTok)
			now := lookupFrom(map[Source]Content{{ConfigMap, "app"}: tc.nowApp, {Secret, "tok"}: tc.nowTok})
			got, err := StoredBeforeIgnoreToggle(key, "ns", refs, now, stored, ToggleCheck{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Kept != tc.want {
				t.Errorf("StoredBeforeIgnoreToggle = %+v, want kept %v", got, tc.want)
			}
		})
	}
}

// toggleFixture is n whole-object ConfigMaps of keys keys each, every
// fourth one ignored now, and refs reading them all.
func toggleFixture(n, keys int) (map[Source]Content, []Reference) {
	objects := make(map[Source]Content, n)
	refs := make([]Reference, 0, n)
	for i := range n {
		src := Source{ConfigMap, fmt.Sprintf("config-%04d", i)}
		c := Content{Data: make(map[string]Digest, keys), Ignored: i%4 == 3}
		for k := range keys {
			c.Data[fmt.Sprintf("key-%04d", k)] = DigestOf(fmt.Appendf(nil, "value %d/%d", i, k))
		}
		objects[src] = c
		refs = append(refs, Reference{Source: src, AllKeys: true})
	}
	// One key-list read, one optional source that does not exist.
	refs = append(refs, keyed(Secret, "tok", "t", "u"), optional(whole(Secret, "absent")))
	objects[Source{Secret, "tok"}] = dataOf("t", "1")
	return objects, refs
}

// stampFlipped is the stamp refs gave when flip was (or was not) ignored,
// the rest as it is now: a full recomputation, as the first version of
// StoredBeforeIgnoreToggle did once per source.
func stampFlipped(t testing.TB, key []byte, refs []Reference, objects map[Source]Content, flip Source) string {
	t.Helper()
	lookup := lookupFrom(objects)
	res, err := Checksum(key, "ns", refs, func(s Source) (Content, bool, error) {
		c, found, err := lookup(s)
		if s == flip {
			c.Ignored = !c.Ignored
		}
		return c, found, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return res.Checksum
}

// Each source is looked up once, not once per source tried: the check
// cost sources × sources lookups and sources × total keys of pre-image.
func TestStoredBeforeIgnoreToggleLooksUpEachSourceOnce(t *testing.T) {
	key := []byte("k")
	objects, refs := toggleFixture(40, 3)
	lookups := 0
	counting := func(s Source) (Content, bool, error) {
		lookups++
		return lookupFrom(objects)(s)
	}
	// A stamp no toggle explains: every source that exists is tried.
	res, err := StoredBeforeIgnoreToggle(key, "ns", refs, counting, stampFlipped(t, key, refs, objects, Source{ConfigMap, "nothing"}), ToggleCheck{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kept || res.Exhausted || res.Tried != 41 {
		t.Errorf("result %+v, want not kept after 41 tries", res)
	}
	if lookups != len(refs) {
		t.Errorf("%d lookups for %d sources, want one each", lookups, len(refs))
	}
}

// A try gives exactly the stamp a full recomputation with that one source
// flipped gives: the pre-image is unchanged, byte for byte.
func TestStoredBeforeIgnoreToggleMatchesFullRecomputation(t *testing.T) {
	key := []byte("k")
	objects, refs := toggleFixture(9, 4)
	for _, ref := range refs {
		t.Run(ref.Source.String(), func(t *testing.T) {
			stored := stampFlipped(t, key, refs, objects, ref.Source)
			res, err := StoredBeforeIgnoreToggle(key, "ns", refs, lookupFrom(objects), stored, ToggleCheck{})
			if err != nil {
				t.Fatal(err)
			}
			_, exists := objects[ref.Source]
			if res.Kept != exists {
				t.Errorf("result %+v for a stamp with %s flipped; want kept %v", res, ref.Source, exists)
			}
		})
	}
}

// The sources known to have toggled go first, then those ignored now, and
// MaxBytes bounds the tries.
func TestStoredBeforeIgnoreToggleOrderAndBound(t *testing.T) {
	key := []byte("k")
	objects, refs := toggleFixture(40, 3)
	counted := Source{ConfigMap, "config-0038"} // counted now, late in order
	ignored := Source{ConfigMap, "config-0039"} // the last of ten ignored now
	lookup := lookupFrom(objects)
	tests := map[string]struct {
		flip  Source
		check ToggleCheck
		want  ToggleResult
	}{
		"known toggle first": {
			flip:  counted,
			check: ToggleCheck{Toggled: func(s Source) bool { return s == counted }, MaxBytes: 1},
			want:  ToggleResult{Kept: true, Tried: 1},
		},
		"ignored now before the rest": {
			flip: ignored,
			want: ToggleResult{Kept: true, Tried: 10},
		},
		"unbounded finds any": {
			// The ten ignored ones, then the thirtieth counted one.
			flip: counted,
			want: ToggleResult{Kept: true, Tried: 10 + 30},
		},
		"bound reached": {
			flip:  counted,
			check: ToggleCheck{MaxBytes: 1},
			want:  ToggleResult{Tried: 1, Exhausted: true},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			stored := stampFlipped(t, key, refs, objects, tc.flip)
			res, err := StoredBeforeIgnoreToggle(key, "ns", refs, lookup, stored, tc.check)
			if err != nil {
				t.Fatal(err)
			}
			if res != tc.want {
				t.Errorf("result %+v, want %+v", res, tc.want)
			}
		})
	}
}

func TestStoredBeforeIgnoreToggleOtherStamps(t *testing.T) {
	key := []byte("k")
	objects, refs := toggleFixture(3, 1)
	lookups := 0
	counting := func(s Source) (Content, bool, error) {
		lookups++
		return lookupFrom(objects)(s)
	}
	stamp := stampFlipped(t, key, refs, objects, Source{ConfigMap, "config-0000"})
	for _, stored := range []string{"", "v1:abc", "v2:" + KeyID([]byte("other")) + stamp[len("v2:")+16:], stamp[:len(stamp)-1], strings.ToUpper(stamp)} {
		res, err := StoredBeforeIgnoreToggle(key, "ns", refs, counting, stored, ToggleCheck{})
		if err != nil || res != (ToggleResult{}) {
			t.Errorf("stored %q: %+v, %v; want nothing tried", stored, res, err)
		}
	}
	if lookups != 0 {
		t.Errorf("%d lookups for stamps that cannot match", lookups)
	}
}
