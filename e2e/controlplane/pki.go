//go:build linux

package controlplane

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// certValidity is long enough for any test run or a `cluster up` left running
// for days, short enough that a leaked key is not a concern.
const certValidity = 30 * 24 * time.Hour

// pki is the key material of one control plane, PEM-encoded. It is generated
// fresh for every cluster so nothing secret is committed or shared.
type pki struct {
	CACert      []byte
	CAKey       []byte
	ServingCert []byte
	ServingKey  []byte
	AdminCert   []byte
	AdminKey    []byte
	// WebhookClientCert and WebhookClientKey are the client pair the API
	// server presents to the webhooks it calls, when
	// Options.WebhookClientCert asks for it (see admissionConfig). It is
	// signed by the CA, as the admin pair is, and told apart from it by
	// its common name, WebhookClientName.
	WebhookClientCert []byte
	WebhookClientKey  []byte
	// ServiceAccountKey signs ServiceAccount tokens (apiserver) and legacy
	// token Secrets (controller-manager); ServiceAccountPublicKey verifies
	// them. The public half is a separate PKIX file because the API server's
	// --service-account-key-file does not accept a PKCS#8 private key.
	ServiceAccountKey       []byte
	ServiceAccountPublicKey []byte
}

// pkiFiles are the paths that the processes' flags point at.
type pkiFiles struct {
	CACert, ServingCert, ServingKey, ServiceAccountKey, ServiceAccountPublicKey string
	// AdminCert and AdminKey are the system:masters client pair; the API
	// server presents it to the kubelet.
	AdminCert, AdminKey string
	// WebhookClientCert and WebhookClientKey are the pair the API server
	// presents to webhooks when Options.WebhookClientCert is set.
	WebhookClientCert, WebhookClientKey string
}

// WebhookClientName is the common name of the client certificate the API
// server presents to webhooks (Options.WebhookClientCert).
const WebhookClientName = "kube-apiserver-webhook-client"

// servingSANs are the names a client may use for the API server: loopback for
// us, the in-cluster names and the first service IP (of serviceCIDR) for
// anything that resolves the `kubernetes` Service, and the node's bridge
// address, where it listens when the cluster has a node.
func servingSANs() ([]string, []net.IP) {
	return []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1"), nodeAddress()}
}

// newPKI generates a CA, an API server serving certificate, an admin client
// certificate in system:masters (which RBAC lets do anything) and a
// ServiceAccount signing key. ECDSA P-256 keeps generation in milliseconds.
func newPKI() (*pki, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating CA key: %w", err)
	}
	caTemplate := &x509.Certificate{
		Subject:               pkix.Name{CommonName: "confighash-e2e-ca"},
		NotBefore:             now.Add(-time.Hour), // tolerate clock skew
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, caCert, err := sign(caTemplate, caTemplate, caKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("self-signing CA: %w", err)
	}

	servingKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating serving key: %w", err)
	}
	dnsNames, ips := servingSANs()
	servingDER, _, err := sign(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(certValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    dnsNames,
		IPAddresses: ips,
	}, caCert, servingKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("signing serving certificate: %w", err)
	}

	adminKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating admin key: %w", err)
	}
	adminDER, _, err := sign(&x509.Certificate{
		// The API server maps CN to the user name and O to groups.
		Subject:     pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(certValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, caCert, adminKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("signing admin certificate: %w", err)
	}

	webhookClientKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating webhook client key: %w", err)
	}
	webhookClientDER, _, err := sign(&x509.Certificate{
		// No group: this identity is for webhooks, not for the API.
		Subject:     pkix.Name{CommonName: WebhookClientName},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(certValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, caCert, webhookClientKey.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("signing webhook client certificate: %w", err)
	}

	saKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("generating service-account key: %w", err)
	}

	saPublic, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return nil, fmt.Errorf("encoding service-account public key: %w", err)
	}

	p := &pki{
		ServiceAccountPublicKey: pemBlock("PUBLIC KEY", saPublic),
		CACert:                  pemBlock("CERTIFICATE", caDER),
		ServingCert:             pemBlock("CERTIFICATE", servingDER),
		AdminCert:               pemBlock("CERTIFICATE", adminDER),
		WebhookClientCert:       pemBlock("CERTIFICATE", webhookClientDER),
	}
	for _, k := range []struct {
		dst *[]byte
		key *ecdsa.PrivateKey
	}{{&p.CAKey, caKey}, {&p.ServingKey, servingKey}, {&p.AdminKey, adminKey}, {&p.WebhookClientKey, webhookClientKey}, {&p.ServiceAccountKey, saKey}} {
		der, err := x509.MarshalPKCS8PrivateKey(k.key)
		if err != nil {
			return nil, fmt.Errorf("encoding private key: %w", err)
		}
		*k.dst = pemBlock("PRIVATE KEY", der)
	}
	return p, nil
}

// sign issues template signed by parent's key and returns both the DER bytes
// and the parsed certificate (needed as the parent of the next one).
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

// write stores the material the processes read from disk in dir/pki. Keys are
// 0600 because `cluster up` leaves them in the repository checkout.
func (p *pki) write(dir string) (pkiFiles, error) {
	pkiDir := filepath.Join(dir, "pki")
	if err := os.MkdirAll(pkiDir, 0o700); err != nil {
		return pkiFiles{}, fmt.Errorf("creating %s: %w", pkiDir, err)
	}
	files := pkiFiles{
		CACert:                  filepath.Join(pkiDir, "ca.crt"),
		ServingCert:             filepath.Join(pkiDir, "apiserver.crt"),
		ServingKey:              filepath.Join(pkiDir, "apiserver.key"),
		ServiceAccountKey:       filepath.Join(pkiDir, "service-account.key"),
		ServiceAccountPublicKey: filepath.Join(pkiDir, "service-account.pub"),
		AdminCert:               filepath.Join(pkiDir, "admin.crt"),
		AdminKey:                filepath.Join(pkiDir, "admin.key"),
		WebhookClientCert:       filepath.Join(pkiDir, "webhook-client.crt"),
		WebhookClientKey:        filepath.Join(pkiDir, "webhook-client.key"),
	}
	for path, data := range map[string][]byte{
		files.CACert:                    p.CACert,
		filepath.Join(pkiDir, "ca.key"): p.CAKey,
		files.ServingCert:               p.ServingCert,
		files.ServingKey:                p.ServingKey,
		files.AdminCert:                 p.AdminCert,
		files.AdminKey:                  p.AdminKey,
		files.WebhookClientCert:         p.WebhookClientCert,
		files.WebhookClientKey:          p.WebhookClientKey,
		files.ServiceAccountKey:         p.ServiceAccountKey,
		files.ServiceAccountPublicKey:   p.ServiceAccountPublicKey,
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return pkiFiles{}, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return files, nil
}
