//go:build linux

package controlplane

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
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
// ServiceAccount signing key.
func newPKI() (*pki, error) {
	now := time.Now()
	ca, err := Issue(&x509.Certificate{
		Subject:               pkix.Name{CommonName: "confighash-e2e-ca"},
		NotBefore:             now.Add(-time.Hour), // tolerate clock skew
		NotAfter:              now.Add(certValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}, nil)
	if err != nil {
		return nil, fmt.Errorf("self-signing CA: %w", err)
	}
	dnsNames, ips := servingSANs()
	serving, err := Issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(certValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    dnsNames,
		IPAddresses: ips,
	}, ca)
	if err != nil {
		return nil, fmt.Errorf("signing serving certificate: %w", err)
	}
	// The API server maps CN to the user name and O to groups.
	admin, err := clientPair(pkix.Name{CommonName: "admin", Organization: []string{"system:masters"}}, now, ca)
	if err != nil {
		return nil, fmt.Errorf("signing admin certificate: %w", err)
	}
	// No group: this identity is for webhooks, not for the API.
	webhookClient, err := clientPair(pkix.Name{CommonName: WebhookClientName}, now, ca)
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
	saPrivate, err := x509.MarshalPKCS8PrivateKey(saKey)
	if err != nil {
		return nil, fmt.Errorf("encoding service-account key: %w", err)
	}
	return &pki{
		CACert:                  ca.CertPEM,
		CAKey:                   ca.KeyPEM,
		ServingCert:             serving.CertPEM,
		ServingKey:              serving.KeyPEM,
		AdminCert:               admin.CertPEM,
		AdminKey:                admin.KeyPEM,
		WebhookClientCert:       webhookClient.CertPEM,
		WebhookClientKey:        webhookClient.KeyPEM,
		ServiceAccountKey:       pemBlock("PRIVATE KEY", saPrivate),
		ServiceAccountPublicKey: pemBlock("PUBLIC KEY", saPublic),
	}, nil
}

// clientPair is a client certificate for subject signed by ca.
func clientPair(subject pkix.Name, now time.Time, ca *KeyPair) (*KeyPair, error) {
	return Issue(&x509.Certificate{
		Subject:     subject,
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(certValidity),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}, ca)
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
