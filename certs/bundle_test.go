package certs

import (
	"bytes"
	"crypto/x509"
	"encoding/pem"
	"testing"
	"time"
)

func TestCABundle(t *testing.T) {
	day := 24 * time.Hour
	current := mustCA(t, 10*365*day, testNow)
	previous := mustCA(t, 100*day, testNow.Add(-90*day)) // expires at testNow+10d

	tests := map[string]struct {
		data    map[string][]byte
		now     time.Time
		want    []*x509.Certificate // in order
		wantErr bool
	}{
		"current CA only": {
			data: map[string][]byte{SecretCACertKey: current.certPEM},
			now:  testNow,
			want: []*x509.Certificate{current.cert},
		},
		"rotation: previous CA still valid": {
			data: map[string][]byte{SecretCACertKey: current.certPEM, SecretPreviousCACertKey: previous.certPEM},
			now:  testNow,
			want: []*x509.Certificate{current.cert, previous.cert},
		},
		"rotation over: previous CA expired": {
			data: map[string][]byte{SecretCACertKey: current.certPEM, SecretPreviousCACertKey: previous.certPEM},
			now:  testNow.Add(11 * day),
			want: []*x509.Certificate{current.cert},
		},
		"previous equals current": {
			data: map[string][]byte{SecretCACertKey: current.certPEM, SecretPreviousCACertKey: current.certPEM},
			now:  testNow,
			want: []*x509.Certificate{current.cert},
		},
		"previous unparseable": {
			data: map[string][]byte{SecretCACertKey: current.certPEM, SecretPreviousCACertKey: []byte("junk")},
			now:  testNow,
			want: []*x509.Certificate{current.cert},
		},
		"current CA missing": {
			data:    map[string][]byte{SecretPreviousCACertKey: previous.certPEM},
			now:     testNow,
			wantErr: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := caBundle(tc.data, tc.now)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			var certs []*x509.Certificate
			for rest := got; ; {
				var block *pem.Block
				block, rest = pem.Decode(rest)
				if block == nil {
					if len(bytes.TrimSpace(rest)) != 0 {
						t.Fatalf("trailing data in bundle: %q", rest)
					}
					break
				}
				c, err := x509.ParseCertificate(block.Bytes)
				if err != nil {
					t.Fatalf("bundle holds an unparseable certificate: %v", err)
				}
				certs = append(certs, c)
			}
			if len(certs) != len(tc.want) {
				t.Fatalf("bundle holds %d certificates, want %d", len(certs), len(tc.want))
			}
			for i := range certs {
				if !certs[i].Equal(tc.want[i]) {
					t.Errorf("bundle certificate %d is %q, want %q", i, certs[i].Subject, tc.want[i].Subject)
				}
			}
		})
	}
}

// During a rotation, a serving certificate from either CA must verify against
// the bundle, so replicas that have not reloaded yet keep working.
func TestCABundleTrustsBothGenerationsDuringRotation(t *testing.T) {
	day := 24 * time.Hour
	oldCA := mustCA(t, 100*day, testNow.Add(-90*day))
	newCA := mustCA(t, 10*365*day, testNow)
	oldLeaf := mustServing(t, oldCA, []string{"webhook.ns.svc"}, nil, 5*day, testNow.Add(-day))
	newLeaf := mustServing(t, newCA, []string{"webhook.ns.svc"}, nil, 365*day, testNow)

	bundle, err := caBundle(map[string][]byte{SecretCACertKey: newCA.certPEM, SecretPreviousCACertKey: oldCA.certPEM}, testNow)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(bundle) {
		t.Fatal("bundle is not valid PEM")
	}
	for name, leaf := range map[string]*keyPair{"old": oldLeaf, "new": newLeaf} {
		if _, err := leaf.cert.Verify(x509.VerifyOptions{DNSName: "webhook.ns.svc", Roots: roots, CurrentTime: testNow}); err != nil {
			t.Errorf("%s serving certificate does not verify against the bundle: %v", name, err)
		}
	}
}
