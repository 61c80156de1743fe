package hasher

import (
	"crypto/sha256"

	corev1 "k8s.io/api/core/v1"
)

// Digest is the SHA-256 of one value.
type Digest [sha256.Size]byte

// DigestOf returns the digest of value.
func DigestOf(value []byte) Digest {
	return sha256.Sum256(value)
}

// Content is what a checksum needs of one source: a digest per key, never the
// values themselves, so callers can cache content without keeping Secret
// values in memory.
type Content struct {
	Data       map[string]Digest // ConfigMap.data or Secret.data
	BinaryData map[string]Digest // ConfigMap.binaryData
	// Ignored is true when the source carries contract.IgnoreAnnotation: the v2
	// pre-image then leaves Data and BinaryData out. They are still kept,
	// so that a caller can tell what the checksum would be without it.
	Ignored bool
}

// ConfigMapContent digests the data and binaryData of cm. A nil cm gives
// empty Content.
func ConfigMapContent(cm *corev1.ConfigMap) Content {
	if cm == nil {
		return Content{}
	}
	c := Content{Ignored: IgnoredBy(cm.Annotations)}
	if len(cm.Data) > 0 {
		c.Data = make(map[string]Digest, len(cm.Data))
		for k, v := range cm.Data {
			c.Data[k] = DigestOf([]byte(v))
		}
	}
	c.BinaryData = digestBytes(cm.BinaryData)
	return c
}

// SecretContent digests the data of s. A nil s gives empty Content.
// stringData is ignored: it is write-only, merged into data by the API
// server, and never returned on reads.
func SecretContent(s *corev1.Secret) Content {
	if s == nil {
		return Content{}
	}
	return Content{Data: digestBytes(s.Data), Ignored: IgnoredBy(s.Annotations)}
}

func digestBytes(m map[string][]byte) map[string]Digest {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]Digest, len(m))
	for k, v := range m {
		out[k] = DigestOf(v)
	}
	return out
}
