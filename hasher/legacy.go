package hasher

import (
	"encoding/binary"
	"encoding/hex"
)

// LegacyVersion is the previous stamp format: "v1:" and 64 hex digits, with
// no namespace in the pre-image and no key ID in the stamp.
//
// LEGACY: confighash never writes it. It is computed only to compare with a
// stamp that an older release wrote, so that upgrading rolls nothing: a v1
// stamp that still matches the content is kept until the content changes.
// Remove it once no v1 stamps are left: after a restart of confighash,
// confighash_stamps_kept_total{reason="legacy-v1"} stays at zero.
const LegacyVersion = "v1"

const legacyPreimageHeader = "confighash/" + LegacyVersion + "\x00"

// LegacyChecksumV1 computes the v1 stamp of refs, for comparison only.
//
// LEGACY: see LegacyVersion. Never write its result anywhere: a v1 stamp
// does not depend on the namespace, and publishing one would reopen the
// cross-namespace guessing that v2 closes.
func LegacyChecksumV1(key []byte, refs []Reference, lookup Lookup) (Result, error) {
	mac, res, err := compute(key, newLegacyPreimage, refs, lookup)
	if err != nil || mac == nil {
		return res, err
	}
	res.Checksum = LegacyVersion + ":" + hex.EncodeToString(mac)
	return res, nil
}

// newLegacyPreimage starts a v1 pre-image: no namespace.
func newLegacyPreimage(sources int) *preimage {
	p := &preimage{buf: make([]byte, 0, 1024)}
	p.buf = append(p.buf, legacyPreimageHeader...)
	p.buf = binary.AppendUvarint(p.buf, uint64(sources))
	return p
}
