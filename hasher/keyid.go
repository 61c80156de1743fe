package hasher

import (
	"crypto/sha256"
	"encoding/hex"
)

// keyIDContext separates key IDs from any other hash of the key.
const keyIDContext = "confighash/key-id\x00"

// KeyID names an HMAC key without revealing it: the first 8 bytes of
// SHA-256 over a fixed context and the key, as 16 lowercase hex digits. It
// travels in every stamp so that a stamp made under another key (the key
// Secret was lost, or rotated on purpose) is recognised as such instead of
// being mistaken for a content change, which would roll every workload.
// Keys are 32 random bytes, so the ID helps no one guess them.
func KeyID(key []byte) string {
	h := sha256.New()
	h.Write([]byte(keyIDContext))
	h.Write(key)
	return hex.EncodeToString(h.Sum(nil)[:8])
}
