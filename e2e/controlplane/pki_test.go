//go:build linux

package controlplane

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
)

// testPKI is a fresh PKI.
func testPKI(t *testing.T) *pki {
	t.Helper()
	p, err := newPKI()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// writtenPKI writes a fresh PKI into a temporary directory.
func writtenPKI(t *testing.T) (dir string, files pkiFiles) {
	t.Helper()
	dir = t.TempDir()
	files, err := testPKI(t).write(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, files
}

// clientCertOf parses certPEM and fails unless it verifies as a client
// certificate of p's CA.
func clientCertOf(t *testing.T, p *pki, certPEM []byte) *x509.Certificate {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(p.CACert)
	c := parseCert(t, certPEM)
	if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("%s does not verify as a client certificate of the CA: %v", c.Subject, err)
	}
	return c
}

func parseCert(t *testing.T, data []byte) *x509.Certificate {
	t.Helper()
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" {
		t.Fatalf("not a PEM certificate: %q", data)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func TestPKIServingCertVerifiesForLoopbackAndServiceNames(t *testing.T) {
	p := testPKI(t)
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(p.CACert) {
		t.Fatal("CA certificate does not parse")
	}
	serving := parseCert(t, p.ServingCert)
	for _, name := range []string{"127.0.0.1", "localhost", "kubernetes.default.svc", "10.0.0.1"} {
		if _, err := serving.Verify(x509.VerifyOptions{DNSName: name, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Errorf("serving certificate does not verify for %s: %v", name, err)
		}
	}
	if _, err := serving.Verify(x509.VerifyOptions{DNSName: "example.com", Roots: roots}); err == nil {
		t.Error("serving certificate verifies for example.com")
	}
}

func TestPKIAdminCertIsSystemMastersClient(t *testing.T) {
	p := testPKI(t)
	admin := clientCertOf(t, p, p.AdminCert)
	if admin.Subject.CommonName != "admin" || len(admin.Subject.Organization) != 1 || admin.Subject.Organization[0] != "system:masters" {
		t.Errorf("admin subject = %v, want CN=admin O=system:masters", admin.Subject)
	}
}

func TestPKIWriteKeepsKeysPrivate(t *testing.T) {
	dir, files := writtenPKI(t)
	for _, path := range []string{files.CACert, files.ServingCert, files.ServingKey, files.ServiceAccountKey, filepath.Join(dir, "pki", "admin.key")} {
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s has mode %v, want 0600", path, perm)
		}
	}
	key, err := os.ReadFile(files.ServiceAccountKey)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(key)
	if block == nil {
		t.Fatal("service-account key is not PEM")
	}
	priv, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatalf("service-account key does not parse as PKCS#8: %v", err)
	}
	pubPEM, err := os.ReadFile(files.ServiceAccountPublicKey)
	if err != nil {
		t.Fatal(err)
	}
	block, _ = pem.Decode(pubPEM)
	if block == nil || block.Type != "PUBLIC KEY" {
		t.Fatalf("service-account public key is not a PEM PUBLIC KEY: %q", pubPEM)
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if !priv.(*ecdsa.PrivateKey).PublicKey.Equal(pub) {
		t.Error("service-account public key does not match the private key")
	}
}
