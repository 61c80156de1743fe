package hasher

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
		"true":        {annotations: map[string]string{IgnoreAnnotation: "true"}, want: true},
		"false":       {annotations: map[string]string{IgnoreAnnotation: "false"}},
		"other value": {annotations: map[string]string{IgnoreAnnotation: "yes"}},
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
			got, err := StoredBeforeIgnoreToggle(key, "ns", refs, now, stored)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("StoredBeforeIgnoreToggle = %v, want %v", got, tc.want)
			}
		})
	}
}
