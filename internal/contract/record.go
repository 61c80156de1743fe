package contract

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The records confighash keeps on a workload's own metadata
// (RolloutAnnotation, HaltAnnotation, HoldAnnotation) are written by the
// hook, but any one who can write the workload can write them too, or copy
// them from another workload. So each is sealed: its value ends in
// " mac=HEX", an HMAC-SHA256, under confighash's key, of the workload it is
// on and of the rest of the value. A record that does not verify is not the
// hook's record for this workload.

// maxRecordLen bounds the value of a record that is read at all: a longer
// one is refused before it is parsed or its MAC computed, so a tenant's
// 256 KiB annotation costs a length check. The hook writes nothing longer
// (Rollout.Sealed leaves out what does not fit).
const maxRecordLen = 16 << 10

// clockSkew is how far in the future a record's since may be and still be
// read, for clocks that differ between replicas: a record from further
// ahead was not written by a leader, and one within it counts as written
// now.
const clockSkew = time.Minute

// macField is the key of a record's MAC; it is always the last field.
const macField = " mac="

// macLen is the length of the MAC in hex: all of HMAC-SHA256.
const macLen = 2 * sha256.Size

// recordDomain begins every record MAC's pre-image. It separates record
// MACs from every other use of the key: the checksum's pre-image begins
// "confighash/" and the key ID's its own context, and neither can begin
// with this.
const recordDomain = "confighash.dev/record-mac/v1\x00"

// Subject names the workload a record is on, as the MAC binds it: kind
// (group and kind, e.g. "Deployment.apps"), namespace, name and UID. A
// record copied to another workload, or to one deleted and created again
// under the same name, names another subject and does not verify.
type Subject struct {
	Kind, Namespace, Name, UID string
}

// Errors a record is refused with; read them with errors.Is.
var (
	// ErrRecordTooLong: longer than maxRecordLen; not parsed.
	ErrRecordTooLong = errors.New("longer than the limit for a record")
	// ErrRecordUnsealed: no MAC, as a record written before records were
	// sealed, or by hand.
	ErrRecordUnsealed = errors.New("not sealed by confighash")
	// ErrRecordForged: a MAC that does not verify for this workload under
	// this key: forged, copied from another workload, or sealed under an
	// earlier key.
	ErrRecordForged = errors.New("its MAC does not verify for this workload")
	// ErrRecordFuture: a since more than clockSkew ahead.
	ErrRecordFuture = errors.New("its since is in the future")
)

// mac is the record MAC of body as the value of annotation on s. Every
// field is length-prefixed, so no two inputs give one pre-image.
func mac(key []byte, s Subject, annotation, body string) string {
	m := hmac.New(sha256.New, key)
	b := make([]byte, 0, len(recordDomain)+len(body)+128)
	b = append(b, recordDomain...)
	for _, f := range []string{annotation, s.Kind, s.Namespace, s.Name, s.UID, body} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))
}

// seal returns body sealed for s.
func seal(key []byte, s Subject, annotation, body string) string {
	return body + macField + mac(key, s, annotation, body)
}

// open checks value's length and MAC and returns what the MAC covers, the
// value without it: the only text that is then parsed.
func open(key []byte, s Subject, annotation, value string) (string, error) {
	if len(value) > maxRecordLen {
		return "", fmt.Errorf("%s (%d bytes): %w", annotation, len(value), ErrRecordTooLong)
	}
	i := len(value) - macLen - len(macField)
	if i < 0 || value[i:i+len(macField)] != macField {
		if strings.Contains(value, macField) {
			return "", fmt.Errorf("%s: %w", annotation, ErrRecordForged)
		}
		return "", fmt.Errorf("%s: %w", annotation, ErrRecordUnsealed)
	}
	body, got := value[:i], value[i+len(macField):]
	if !hmac.Equal([]byte(got), []byte(mac(key, s, annotation, body))) {
		return "", fmt.Errorf("%s: %w", annotation, ErrRecordForged)
	}
	return body, nil
}

// notAhead refuses a since more than clockSkew after now, and takes one
// within it as now: a since in the future would make every exit of a
// container started before it look older than the change.
func notAhead(annotation string, since, now time.Time) (time.Time, error) {
	if since.After(now.Add(clockSkew)) {
		return time.Time{}, fmt.Errorf("%s: since %s, now %s: %w", annotation,
			since.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339), ErrRecordFuture)
	}
	if since.After(now) {
		return now, nil
	}
	return since, nil
}

// Sealed reports whether value carries a MAC at all (well-formed, not
// checked), for readers without the key such as `confighash status`: an
// unsealed record is one the hook ignores.
func Sealed(value string) bool {
	i := len(value) - macLen - len(macField)
	return i >= 0 && value[i:i+len(macField)] == macField && isHex(value[i+len(macField):])
}

// Unsealed returns value without its MAC, for readers without the key that
// show a record: what it says, unverified. A value without one is returned
// as it is.
func Unsealed(value string) string {
	if !Sealed(value) {
		return value
	}
	return value[:len(value)-macLen-len(macField)]
}

func isHex(s string) bool {
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}
