package deploy

import (
	"slices"
	"testing"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
)

// servingCert is the Certificate for the webhook's Service, or nil.
func servingCert(t *testing.T, r *rendered) *cmapi.Certificate {
	t.Helper()
	for _, c := range r.Certs {
		if !c.Spec.IsCA {
			return c
		}
	}
	return nil
}

func issuerNamed(r *rendered, name string) *cmapi.Issuer {
	for _, i := range r.Issuers {
		if i.Name == name {
			return i
		}
	}
	return nil
}

// TestCertManagerChain checks the cert-manager objects: a selfSigned Issuer
// signs only the CA, the CA Issuer signs the serving certificate for the
// webhook's Service, and the cainjector reads that certificate. The
// self-managed renders must not contain any of them.
func TestCertManagerChain(t *testing.T) {
	for _, r := range decodedRenders(t) {
		t.Run(r.Name, func(t *testing.T) {
			if r.Mode.Flag == "self" {
				if len(r.Certs)+len(r.Issuers) > 0 {
					t.Errorf("self-managed certificates, yet %d cert-manager objects rendered", len(r.Certs)+len(r.Issuers))
				}
				return
			}
			serving := servingCert(t, r)
			if serving == nil || len(r.Certs) != 2 || len(r.Issuers) != 2 {
				t.Fatalf("want a CA and a serving Certificate and two Issuers; got %d Certificates, %d Issuers", len(r.Certs), len(r.Issuers))
			}
			svc := r.Service.Name + "." + r.Service.Namespace + ".svc"
			if want := []string{svc, svc + ".cluster.local"}; !slices.Equal(serving.Spec.DNSNames, want) {
				t.Errorf("serving Certificate dnsNames %v, want %v", serving.Spec.DNSNames, want)
			}
			if got, want := r.MWC.Annotations["cert-manager.io/inject-ca-from"], serving.Namespace+"/"+serving.Name; got != want {
				t.Errorf("inject-ca-from %q, want %q", got, want)
			}
			caIssuer := issuerNamed(r, serving.Spec.IssuerRef.Name)
			if serving.Spec.IssuerRef.Kind != "Issuer" || caIssuer == nil || caIssuer.Spec.CA == nil {
				t.Fatalf("the serving Certificate's issuer %v is not a CA Issuer of the render", serving.Spec.IssuerRef)
			}
			var ca *cmapi.Certificate
			for _, c := range r.Certs {
				if c.Spec.IsCA && c.Spec.SecretName == caIssuer.Spec.CA.SecretName {
					ca = c
				}
			}
			if ca == nil {
				t.Fatalf("no isCA Certificate issues the CA Issuer's Secret %s", caIssuer.Spec.CA.SecretName)
			}
			if root := issuerNamed(r, ca.Spec.IssuerRef.Name); ca.Spec.IssuerRef.Kind != "Issuer" || root == nil || root.Spec.SelfSigned == nil {
				t.Errorf("the CA Certificate's issuer %v is not a selfSigned Issuer of the render", ca.Spec.IssuerRef)
			}
			if ca.Spec.PrivateKey == nil || ca.Spec.PrivateKey.RotationPolicy != cmapi.RotationPolicyNever {
				t.Error("the CA must keep its key across renewals (rotationPolicy: Never), so that serving certificates verify across a CA renewal")
			}
			if ca.Spec.Duration == nil || serving.Spec.Duration == nil || ca.Spec.Duration.Duration <= 4*serving.Spec.Duration.Duration {
				t.Error("the CA must outlive many serving certificates")
			}
			if serving.Spec.SecretName == need(t, r, flagsOf(t, r), "hmac-key-secret") {
				t.Error("the serving certificate's Secret must not be the HMAC key's")
			}
		})
	}
}
