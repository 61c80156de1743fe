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
	return &metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{k: Seal(testKey, ns, stamp, name)}}
}

func TestSealIsAValidLabel(t *testing.T) {
	k, err := StampLabelKey(testStamp)
	if err != nil {
		t.Fatal(err)
	}
	if errs := validation.IsQualifiedName(k); len(errs) > 0 {
		t.Errorf("key %q: %v", k, errs)
	}
	if v := Seal(testKey, "team", testStamp, "app-pin-0123"); len(validation.IsValidLabelValue(v)) > 0 || len(v) != sealHexLen {
		t.Errorf("value %q: %v", v, validation.IsValidLabelValue(v))
	}
}

func TestSealBindsStampSnapshotAndNamespace(t *testing.T) {
	meta := sealed("team", "app-pin-1", testStamp)
	if !SealedTo(testKey, meta, testStamp) {
		t.Fatal("own seal does not verify")
	}
	moved := meta.DeepCopy()
	moved.Name = "app-pin-2" // the label copied onto the source's newer snapshot
	if SealedTo(testKey, moved, testStamp) {
		t.Error("a seal moved to another snapshot verifies")
	}
	elsewhere := meta.DeepCopy()
	elsewhere.Namespace = "other"
	if SealedTo(testKey, elsewhere, testStamp) {
		t.Error("a seal in another namespace verifies")
	}
	// Another stamp whose label key is the same (same first 32 hex).
	other := testStamp[:len(testStamp)-1] + "4"
	if SealedTo(testKey, meta, other) {
		t.Error("a seal for another stamp verifies")
	}
	forged := meta.DeepCopy()
	for k := range forged.Labels {
		forged.Labels[k] = strings.Repeat("0", sealHexLen)
	}
	if SealedTo(testKey, forged, testStamp) {
		t.Error("a forged seal verifies")
	}
	if SealedTo([]byte("another key, thirty-two bytes..."), meta, testStamp) {
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
