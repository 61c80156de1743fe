package certs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/x509"
	"net"
	"testing"
	"time"
)

func TestNewCA(t *testing.T) {
	ca := mustCA(t, 10*365*24*time.Hour, testNow)
	c := ca.cert
	if !c.IsCA || !c.BasicConstraintsValid {
		t.Errorf("IsCA=%v BasicConstraintsValid=%v, want both true", c.IsCA, c.BasicConstraintsValid)
	}
	if c.MaxPathLen != 0 || !c.MaxPathLenZero {
		t.Errorf("MaxPathLen=%d MaxPathLenZero=%v, want 0/true", c.MaxPathLen, c.MaxPathLenZero)
	}
	if c.KeyUsage&x509.KeyUsageCertSign == 0 {
		t.Errorf("KeyUsage %v lacks CertSign", c.KeyUsage)
	}
	if err := c.CheckSignatureFrom(c); err != nil {
		t.Errorf("CA is not self-signed: %v", err)
	}
	if !c.NotBefore.Equal(testNow.Add(-clockSkew)) {
		t.Errorf("NotBefore %v, want %v", c.NotBefore, testNow.Add(-clockSkew))
	}
	if pub, ok := c.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
		t.Errorf("public key %T, want ECDSA P-256", c.PublicKey)
	}
	if c.SerialNumber.Sign() <= 0 {
		t.Errorf("serial %v is not positive", c.SerialNumber)
	}
	if reason := caRenewalReason(ca.certPEM, ca.keyPEM, testNow, time.Hour); reason != "" {
		t.Errorf("fresh CA needs renewal: %s", reason)
	}
}

func TestNewServingCert(t *testing.T) {
	ca := mustCA(t, 10*365*24*time.Hour, testNow)
	shortCA := mustCA(t, 30*24*time.Hour, testNow)
	year := 365 * 24 * time.Hour

	tests := map[string]struct {
		ca           *keyPair
		dnsNames     []string
		ips          []net.IP
		wantNotAfter time.Time
		wantCN       string
	}{
		"dns names only": {
			ca:           ca,
			dnsNames:     []string{"confighash-webhook.confighash-system.svc", "confighash-webhook.confighash-system.svc.cluster.local"},
			wantNotAfter: testNow.Add(year),
			wantCN:       "confighash-webhook.confighash-system.svc",
		},
		"loopback IP only (URL mode)": {
			ca:           ca,
			ips:          []net.IP{net.ParseIP("127.0.0.1")},
			wantNotAfter: testNow.Add(year),
			wantCN:       "127.0.0.1",
		},
		"dns names and IPv4 and IPv6": {
			ca:           ca,
			dnsNames:     []string{"localhost", "webhook.example.svc"},
			ips:          []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.IPv4(10, 0, 0, 7).To4()},
			wantNotAfter: testNow.Add(year),
			wantCN:       "localhost",
		},
		"capped at CA expiry": {
			ca:           shortCA,
			dnsNames:     []string{"webhook.example.svc"},
			wantNotAfter: shortCA.cert.NotAfter,
			wantCN:       "webhook.example.svc",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			kp := mustServing(t, tc.ca, tc.dnsNames, tc.ips, year, testNow)
			c := kp.cert
			roots := x509.NewCertPool()
			roots.AddCert(tc.ca.cert)
			hosts := append([]string(nil), tc.dnsNames...)
			for _, ip := range tc.ips {
				hosts = append(hosts, ip.String())
			}
			for _, host := range hosts {
				_, err := c.Verify(x509.VerifyOptions{
					DNSName:     host,
					Roots:       roots,
					CurrentTime: testNow,
					KeyUsages:   []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
				})
				if err != nil {
					t.Errorf("Verify(%q): %v", host, err)
				}
			}
			if _, err := c.Verify(x509.VerifyOptions{DNSName: "not-requested.example", Roots: roots, CurrentTime: testNow}); err == nil {
				t.Error("certificate verifies for a name that was not requested")
			}
			if !c.NotAfter.Equal(tc.wantNotAfter) {
				t.Errorf("NotAfter %v, want %v", c.NotAfter, tc.wantNotAfter)
			}
			if !c.NotBefore.Equal(testNow.Add(-clockSkew)) {
				t.Errorf("NotBefore %v, want %v", c.NotBefore, testNow.Add(-clockSkew))
			}
			if c.Subject.CommonName != tc.wantCN {
				t.Errorf("CN %q, want %q", c.Subject.CommonName, tc.wantCN)
			}
			if c.IsCA || !c.BasicConstraintsValid {
				t.Errorf("IsCA=%v BasicConstraintsValid=%v, want false/true", c.IsCA, c.BasicConstraintsValid)
			}
			if c.KeyUsage != x509.KeyUsageDigitalSignature {
				t.Errorf("KeyUsage %v, want DigitalSignature", c.KeyUsage)
			}
			if len(c.ExtKeyUsage) != 1 || c.ExtKeyUsage[0] != x509.ExtKeyUsageServerAuth {
				t.Errorf("ExtKeyUsage %v, want [ServerAuth]", c.ExtKeyUsage)
			}
			if pub, ok := c.PublicKey.(*ecdsa.PublicKey); !ok || pub.Curve != elliptic.P256() {
				t.Errorf("public key %T, want ECDSA P-256", c.PublicKey)
			}
			key, err := parseKeyPEM(kp.keyPEM)
			if err != nil || !keyMatches(c, key) {
				t.Errorf("key PEM does not round-trip to the certificate's key (err=%v)", err)
			}
		})
	}
}

func TestNewServingCertRequiresSANs(t *testing.T) {
	ca := mustCA(t, time.Hour, testNow)
	if _, err := newServingCert(ca, nil, nil, time.Hour, testNow); err == nil {
		t.Fatal("expected an error without DNS names or IPs")
	}
}

func TestSerialsAreRandom(t *testing.T) {
	ca := mustCA(t, time.Hour, testNow)
	a := mustServing(t, ca, []string{"a"}, nil, time.Hour, testNow)
	b := mustServing(t, ca, []string{"a"}, nil, time.Hour, testNow)
	if a.cert.SerialNumber.Cmp(b.cert.SerialNumber) == 0 {
		t.Fatalf("two certificates share serial %v", a.cert.SerialNumber)
	}
}
