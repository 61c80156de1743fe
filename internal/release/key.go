package release

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// LoadPrivateKey reads an ECDSA P-256 private key from a PEM file: PKCS #8
// ("PRIVATE KEY", as openssl genpkey and GenerateKeyPair write) or SEC 1
// ("EC PRIVATE KEY"). P-256 with SHA-256 is what cosign's keys are.
func LoadPrivateKey(path string) (*ecdsa.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the signing key: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("%s holds no PEM block", path)
	}
	var key any
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "ENCRYPTED SIGSTORE PRIVATE KEY", "ENCRYPTED COSIGN PRIVATE KEY":
		return nil, fmt.Errorf("%s is a password-protected cosign key; export it unencrypted (PKCS #8 PEM) or make a pair with make release-key", path)
	default:
		return nil, fmt.Errorf("%s: PEM block %q, want PRIVATE KEY or EC PRIVATE KEY", path, block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	ec, ok := key.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%s is not an ECDSA P-256 key", path)
	}
	return ec, nil
}

// LoadPublicKey reads a PEM "PUBLIC KEY" (PKIX), the form cosign's .pub
// files have, as an ECDSA P-256 key.
func LoadPublicKey(path string) (*ecdsa.PublicKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the public key: %w", err)
	}
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PUBLIC KEY" {
		return nil, fmt.Errorf("%s holds no PEM PUBLIC KEY block", path)
	}
	key, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("parsing %s: %w", path, err)
	}
	ec, ok := key.(*ecdsa.PublicKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%s is not an ECDSA P-256 key", path)
	}
	return ec, nil
}

// GenerateKeyPair writes a new P-256 pair to dir: release.key (PKCS #8,
// readable by its owner only) and release.pub. It refuses to overwrite a
// key.
func GenerateKeyPair(dir string) (priv, pub string, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", fmt.Errorf("generating a key: %w", err)
	}
	privDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", "", fmt.Errorf("encoding the private key: %w", err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", fmt.Errorf("encoding the public key: %w", err)
	}
	priv, pub = filepath.Join(dir, "release.key"), filepath.Join(dir, "release.pub")
	if err := writePEM(priv, "PRIVATE KEY", privDER, 0o600); err != nil {
		return "", "", err
	}
	if err := writePEM(pub, "PUBLIC KEY", pubDER, 0o644); err != nil {
		return "", "", err
	}
	return priv, pub, nil
}

func writePEM(path, typ string, der []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s exists; not overwriting a key", path)
	}
	if err != nil {
		return fmt.Errorf("creating %s: %w", path, err)
	}
	if err := pem.Encode(f, &pem.Block{Type: typ, Bytes: der}); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
