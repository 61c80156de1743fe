package pinning

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/hasher"
)

// sealDomain begins every stamp seal's pre-image (see nameDomain).
const sealDomain = "confighash.dev/pin/v1\x00"

// stampIDLen is how much of a stamp's MAC names it in a label key: 128
// bits, so no two stamps of one namespace share a key by chance.
const stampIDLen = 32

// sealHexLen is the length of a seal, a label value: 240 bits of the MAC,
// within the 63 characters a label value may have.
const sealHexLen = 60

// MaxStamps bounds the stamps one snapshot is sealed to. A snapshot is
// shared by every revision with that content, so the bound keeps one
// ConfigMap read by many workloads from growing its snapshot without end;
// the pods of a stamp past it are admitted unpinned.
const MaxStamps = 512

// ErrBadStamp: not a stamp of the current format.
var ErrBadStamp = errors.New("not a current-format stamp")

// StampLabelKey is the key of the label that seals a snapshot to stamp:
// StampLabelPrefix and the start of the stamp's MAC.
func StampLabelKey(stamp string) (string, error) {
	rest, ok := strings.CutPrefix(stamp, hasher.Version+":")
	if !ok {
		return "", fmt.Errorf("%q: %w", stamp, ErrBadStamp)
	}
	_, sum, ok := strings.Cut(rest, ":")
	if !ok || len(sum) < stampIDLen || !isLowerHex(sum) {
		return "", fmt.Errorf("%q: %w", stamp, ErrBadStamp)
	}
	return StampLabelPrefix + sum[:stampIDLen], nil
}

// Seal is the value of snapshot's label for stamp in namespace: a MAC of
// the three, so that it can be neither forged nor moved to another
// snapshot (the same source's newer content, say) or stamp.
func Seal(key []byte, namespace, stamp, snapshot string) string {
	m := hmac.New(sha256.New, key)
	b := make([]byte, 0, len(sealDomain)+len(namespace)+len(stamp)+len(snapshot)+16)
	b = append(b, sealDomain...)
	b = appendString(b, namespace)
	b = appendString(b, stamp)
	b = appendString(b, snapshot)
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))[:sealHexLen]
}

// SealedTo reports whether meta, a snapshot, carries a valid seal for
// stamp.
func SealedTo(key []byte, meta *metav1.ObjectMeta, stamp string) bool {
	k, err := StampLabelKey(stamp)
	if err != nil {
		return false
	}
	got, ok := meta.Labels[k]
	return ok && hmac.Equal([]byte(got), []byte(Seal(key, meta.Namespace, stamp, meta.Name)))
}

// StampCount is how many stamp seals meta carries, valid or not: what
// MaxStamps bounds.
func StampCount(meta *metav1.ObjectMeta) int {
	n := 0
	for k := range meta.Labels {
		if strings.HasPrefix(k, StampLabelPrefix) {
			n++
		}
	}
	return n
}

func isLowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
