package pinning

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/hasher"
)

// sealDomain begins every stamp seal's pre-image (see nameDomain).
const sealDomain = "confighash.dev/pin/v1\x00"

// stampIDLen is how much of a stamp's MAC names it in a label key: 128
// bits, so no two stamps of one namespace share a key by chance.
const stampIDLen = 32

// sealHexLen is how much of the MAC a seal carries: 224 bits, which with
// the count before it stays within the 63 characters of a label value.
const sealHexLen = 56

// maxSealedSources bounds the count a seal carries: at most
// workload.MaxSources sources are read by one template.
const maxSealedSources = 999

// MaxStamps bounds the stamps one snapshot is sealed to. A snapshot is
// shared by every revision with that content, so the bound keeps one
// ConfigMap read by many workloads from growing its snapshot without end;
// the pods of a stamp past it are admitted unpinned.
const MaxStamps = 512

// ErrBadStamp is what a value that is not a current-format stamp is
// refused with.
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

// Seal is the value of snapshot's label for stamp in namespace: "N." and a
// MAC of the four, where N is how many snapshots the stamp pins. The MAC
// keeps it from being forged or moved to another snapshot (the same
// source's newer content, say) or stamp; N lets a reader tell a complete set
// from one a tenant deleted a snapshot of.
func Seal(key []byte, namespace, stamp, snapshot string, sources int) string {
	return strconv.Itoa(sources) + "." + sealMAC(key, namespace, stamp, snapshot, sources)
}

func sealMAC(key []byte, namespace, stamp, snapshot string, sources int) string {
	m := hmac.New(sha256.New, key)
	b := make([]byte, 0, len(sealDomain)+len(namespace)+len(stamp)+len(snapshot)+24)
	b = append(b, sealDomain...)
	b = appendString(b, namespace)
	b = appendString(b, stamp)
	b = appendString(b, snapshot)
	b = appendString(b, strconv.Itoa(sources))
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))[:sealHexLen]
}

// SealedTo reports whether meta, a snapshot, carries a valid seal for
// stamp, and how many snapshots that seal says the stamp pins.
func SealedTo(key []byte, meta *metav1.ObjectMeta, stamp string) (sources int, ok bool) {
	k, err := StampLabelKey(stamp)
	if err != nil {
		return 0, false
	}
	count, mac, found := strings.Cut(meta.Labels[k], ".")
	n, err := strconv.Atoi(count)
	if !found || err != nil || n < 1 || n > maxSealedSources || count != strconv.Itoa(n) {
		return 0, false
	}
	if !hmac.Equal([]byte(mac), []byte(sealMAC(key, meta.Namespace, stamp, meta.Name, n))) {
		return 0, false
	}
	return n, true
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
