package hasher

import (
	"bytes"
	"testing"
)

// TestPreimageLayout spells out the v2 encoding byte by byte, as a readable
// companion to the package documentation.
func TestPreimageLayout(t *testing.T) {
	x, y := DigestOf([]byte("1")), DigestOf([]byte("2"))
	refs := []Reference{
		whole(ConfigMap, "a"),
		keyed(Secret, "s", "m", "k"),
	}
	objects := map[Source]Content{
		{ConfigMap, "a"}: {
			Data:       map[string]Digest{"x": x},
			BinaryData: map[string]Digest{"y": y},
		},
	}

	var want []byte
	add := func(b ...byte) { want = append(want, b...) }
	add([]byte("confighash/v2\x00")...)
	add(4)
	add([]byte("team")...) // namespace
	add(2)                 // sources
	add(9)
	add([]byte("ConfigMap")...)
	add(1, 'a')
	add(scopeAllKeys, statePresent, 2) // 2 entries
	add(fieldData, 1, 'x')
	add(x[:]...)
	add(fieldBinaryData, 1, 'y')
	add(y[:]...)
	add(6)
	add([]byte("Secret")...)
	add(1, 's')
	add(scopeKeys, stateAbsent, 2) // 2 entries
	add(fieldMissing, 1, 'k')
	add(fieldMissing, 1, 'm')

	canon := canonical(refs)
	pre := newPreimage("team", len(canon))
	for _, ref := range canon {
		c, found := objects[ref.Source]
		pre.addSource(ref, c, found)
	}
	if got := pre.bytes(); !bytes.Equal(got, want) {
		t.Errorf("pre-image\n got %q\nwant %q", got, want)
	}
}

// TestPreimageEnvOnly: for an env-only reader the pre-image is that of the
// ConfigMap without its binaryData, byte for byte; a listed key found only
// in binaryData is missing, as the kubelet finds it.
func TestPreimageEnvOnly(t *testing.T) {
	x, y := DigestOf([]byte("1")), DigestOf([]byte("2"))
	withBinary := Content{Data: map[string]Digest{"x": x}, BinaryData: map[string]Digest{"y": y}}
	without := Content{Data: map[string]Digest{"x": x}}
	build := func(ref Reference, c Content) []byte {
		pre := newPreimage("team", 1)
		pre.addSource(canonical([]Reference{ref})[0], c, true)
		return pre.bytes()
	}
	for _, ref := range []Reference{whole(ConfigMap, "a"), keyed(ConfigMap, "a", "x", "y")} {
		if got, want := build(envOnly(ref), withBinary), build(ref, without); !bytes.Equal(got, want) {
			t.Errorf("%+v env-only over binaryData:\n got %q\nwant %q", ref, got, want)
		}
		if got, want := build(envOnly(ref), without), build(ref, without); !bytes.Equal(got, want) {
			t.Errorf("%+v env-only without binaryData: the pre-image changed:\n got %q\nwant %q", ref, got, want)
		}
	}
}
