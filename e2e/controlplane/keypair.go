//go:build linux

package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"math/big"
)

// KeyPair is a certificate and its private key, parsed and PEM-encoded.
type KeyPair struct {
	Cert    *x509.Certificate
	Key     *ecdsa.PrivateKey
	CertPEM []byte
	KeyPEM  []byte
}

// Issue generates a key and a certificate for it from template, signed by
// parent, or self-signed when parent is nil. It sets the template's serial
// number. ECDSA P-256 keeps generation in milliseconds.
func Issue(template *x509.Certificate, parent *KeyPair) (*KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating the key of %q: %w", template.Subject.CommonName, err)
	}
	issuer, issuerKey := template, crypto.Signer(key)
	if parent != nil {
		issuer, issuerKey = parent.Cert, parent.Key
	}
	der, cert, err := sign(template, issuer, key.Public(), issuerKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("encoding the key of %q: %w", template.Subject.CommonName, err)
	}
	return &KeyPair{Cert: cert, Key: key, CertPEM: pemBlock("CERTIFICATE", der), KeyPEM: pemBlock("PRIVATE KEY", keyDER)}, nil
}

// sign issues template signed by parent's key and returns both the DER bytes
// and the parsed certificate.
func sign(template, parent *x509.Certificate, pub crypto.PublicKey, parentKey crypto.Signer) ([]byte, *x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		return nil, nil, fmt.Errorf("generating serial number: %w", err)
	}
	template.SerialNumber = serial
	der, err := x509.CreateCertificate(rand.Reader, template, parent, pub, parentKey)
	if err != nil {
		return nil, nil, fmt.Errorf("creating certificate %q: %w", template.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("parsing certificate %q: %w", template.Subject.CommonName, err)
	}
	return der, cert, nil
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}
