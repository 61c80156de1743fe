package pinning

import (
	"errors"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

const testStamp = "v2:0123456789abcdef:" + "aa11bb22cc33dd44ee55ff6600112233445566778899aabbccddeeff00112233"

func sealed(ns, name, stamp string) *metav1.ObjectMeta {
	k, err := StampLabelKey(stamp)
	if err != nil {
		panic(err)
	}
	return &metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{k: Seal(testKey, ns, stamp, name, 2)}}
}

func TestSealIsAValidLabel(t *testing.T) {
	k, err := StampLabelKey(testStamp)
	if err != nil {
		t.Fatal(err)
	}
	if errs := validation.IsQualifiedName(k); len(errs) > 0 {
		t.Errorf("key %q: %v", k, errs)
	}
	if v := Seal(testKey, "team", testStamp, "app-pin-0123", maxSealedSources); len(validation.IsValidLabelValue(v)) > 0 {
		t.Errorf("value %q: %v", v, validation.IsValidLabelValue(v))
	}
}

func TestSealBindsStampSnapshotAndNamespace(t *testing.T) {
	meta := sealed("team", "app-pin-1", testStamp)
	if n, ok := SealedTo(testKey, meta, testStamp); !ok || n != 2 {
		t.Fatalf("own seal: %d, %v", n, ok)
	}
	recounted := meta.DeepCopy()
	for k, v := range recounted.Labels {
		recounted.Labels[k] = "1" + v[1:] // a tenant claims the set is smaller
	}
	if _, ok := SealedTo(testKey, recounted, testStamp); ok {
		t.Error("a seal with another count verifies")
	}
	padded := meta.DeepCopy()
	for k, v := range padded.Labels {
		padded.Labels[k] = "0" + v
	}
	if _, ok := SealedTo(testKey, padded, testStamp); ok {
		t.Error("a count written another way verifies")
	}
	moved := meta.DeepCopy()
	moved.Name = "app-pin-2" // the label copied onto the source's newer snapshot
	if _, ok := SealedTo(testKey, moved, testStamp); ok {
		t.Error("a seal moved to another snapshot verifies")
	}
	elsewhere := meta.DeepCopy()
	elsewhere.Namespace = "other"
	if _, ok := SealedTo(testKey, elsewhere, testStamp); ok {
		t.Error("a seal in another namespace verifies")
	}
	// Another stamp whose label key is the same (same first 32 hex).
	other := testStamp[:len(testStamp)-1] + "4"
	if _, ok := SealedTo(testKey, meta, other); ok {
		t.Error("a seal for another stamp verifies")
	}
	forged := meta.DeepCopy()
	for k := range forged.Labels {
		forged.Labels[k] = "2." + strings.Repeat("0", sealHexLen)
	}
	if _, ok := SealedTo(testKey, forged, testStamp); ok {
		t.Error("a forged seal verifies")
	}
	if _, ok := SealedTo([]byte("another key, thirty-two bytes..."), meta, testStamp); ok {
		t.Error("a seal verifies under another key")
	}
}

func TestStampLabelKeyRefusesOtherFormats(t *testing.T) {
	for _, s := range []string{"", "v1:" + strings.Repeat("a", 64), "v2:0123456789abcdef", "v2:0123456789abcdef:XYZ" + strings.Repeat("a", 64), "v2:0123456789abcdef:" + strings.Repeat("a", 31)} {
		if _, err := StampLabelKey(s); !errors.Is(err, ErrBadStamp) {
			t.Errorf("%q: %v", s, err)
		}
	}
}

func TestStampCount(t *testing.T) {
	meta := sealed("team", "app-pin-1", testStamp)
	meta.Labels[SnapshotLabel] = "true"
	meta.Labels[StampLabelPrefix+"junk"] = "x"
	if n := StampCount(meta); n != 2 {
		t.Errorf("StampCount = %d, want 2", n)
	}
}
