//go:build e2e

package deploy

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"strings"
	"time"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/e2e/controlplane"
)

// certificateSecret stands in for cert-manager's controller, which cannot
// run here: it issues a fresh CA (named caName) and a serving certificate
// for the Certificate's dnsNames signed by it, and lays them out as
// cert-manager does in the Certificate's Secret. The cainjector reads only
// ca.crt, and only from a Secret whose certificate-name annotation names
// the Certificate; the other annotations are there so the Secret looks
// like the real thing to anything else that reads it.
func certificateSecret(cert *cmapi.Certificate, caName string) (secret *corev1.Secret, caPEM []byte, err error) {
	now := time.Now()
	ca, err := controlplane.Issue(&x509.Certificate{
		Subject:               pkix.Name{CommonName: caName},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("self-signing the CA: %w", err)
	}
	leaf, err := controlplane.Issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: cert.Spec.DNSNames[0]},
		DNSNames:    cert.Spec.DNSNames,
		NotBefore:   now.Add(-time.Minute),
		NotAfter:    now.Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, ca)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the serving certificate: %w", err)
	}

	secret = &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      cert.Spec.SecretName,
			Namespace: cert.Namespace,
			Annotations: map[string]string{
				cmapi.CertificateNameKey:       cert.Name,
				cmapi.IssuerNameAnnotationKey:  cert.Spec.IssuerRef.Name,
				cmapi.IssuerKindAnnotationKey:  cert.Spec.IssuerRef.Kind,
				cmapi.IssuerGroupAnnotationKey: cert.Spec.IssuerRef.Group,
				cmapi.CommonNameAnnotationKey:  leaf.Cert.Subject.CommonName,
				cmapi.AltNamesAnnotationKey:    strings.Join(cert.Spec.DNSNames, ","),
			},
		},
		Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{
			corev1.TLSCertKey:       leaf.CertPEM,
			corev1.TLSPrivateKeyKey: leaf.KeyPEM,
			cmmeta.TLSCAKey:         ca.CertPEM,
		},
	}
	return secret, ca.CertPEM, nil
}
