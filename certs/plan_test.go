package certs

import (
	"bytes"
	"maps"
	"net"
	"strings"
	"testing"
	"time"
)

func TestPlanSecretData(t *testing.T) {
	day := 24 * time.Hour
	spec := issueSpec{
		caCommonName:    "test-ca",
		dnsNames:        []string{"webhook.ns.svc"},
		ips:             []net.IP{net.ParseIP("127.0.0.1")},
		caValidity:      3650 * day,
		certValidity:    365 * day,
		caRenewBefore:   1200 * day,
		certRenewBefore: 120 * day,
	}
	ca := mustCA(t, spec.caValidity, testNow)
	serving := mustServing(t, ca, spec.dnsNames, spec.ips, spec.certValidity, testNow)
	valid := map[string][]byte{
		SecretCACertKey: ca.certPEM, SecretCAKeyKey: ca.keyPEM,
		SecretCertKey: serving.certPEM, SecretKeyKey: serving.keyPEM,
	}
	with := func(extra map[string][]byte) map[string][]byte {
		m := maps.Clone(valid)
		maps.Copy(m, extra)
		return m
	}
	expiredPrev := mustCA(t, day, testNow.Add(-2*day))
	wrongSAN := mustServing(t, ca, []string{"other.ns.svc"}, spec.ips, spec.certValidity, testNow)

	tests := map[string]struct {
		cur          map[string][]byte
		now          time.Time
		wantReasons  []string // substrings, in order; none means unchanged
		wantSameCA   bool
		wantPrevious []byte // expected ca-previous.crt; nil means absent
	}{
		"empty secret": {
			cur:         nil,
			now:         testNow,
			wantReasons: []string{"CA missing", "CA renewed"},
		},
		"valid": {
			cur:        valid,
			now:        testNow.Add(10 * day),
			wantSameCA: true,
		},
		"serving certificate near expiry": {
			cur:         valid,
			now:         testNow.Add(300 * day),
			wantReasons: []string{"serving certificate expires"},
			wantSameCA:  true,
		},
		"serving certificate lacks a requested name": {
			cur:         with(map[string][]byte{SecretCertKey: wrongSAN.certPEM, SecretKeyKey: wrongSAN.keyPEM}),
			now:         testNow,
			wantReasons: []string{`lacks DNS name "webhook.ns.svc"`},
			wantSameCA:  true,
		},
		"CA near expiry: rotated, previous kept": {
			cur:          valid,
			now:          testNow.Add(2500 * day),
			wantReasons:  []string{"CA expires", "CA renewed"},
			wantPrevious: ca.certPEM,
		},
		"CA expired: rotated, previous not kept": {
			cur:         valid,
			now:         testNow.Add(3651 * day),
			wantReasons: []string{"CA expired", "CA renewed"},
		},
		"expired previous CA dropped": {
			cur:         with(map[string][]byte{SecretPreviousCACertKey: expiredPrev.certPEM}),
			now:         testNow,
			wantReasons: []string{"previous CA expired"},
			wantSameCA:  true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cur := maps.Clone(tc.cur)
			if cur != nil {
				cur["unrelated"] = []byte("kept")
			}
			next, reasons, err := planSecretData(cur, spec, tc.now)
			if err != nil {
				t.Fatal(err)
			}
			if len(reasons) != len(tc.wantReasons) {
				t.Fatalf("reasons %q, want %q", reasons, tc.wantReasons)
			}
			for i := range reasons {
				if !strings.Contains(reasons[i], tc.wantReasons[i]) {
					t.Errorf("reason %d %q, want it to contain %q", i, reasons[i], tc.wantReasons[i])
				}
			}
			if len(reasons) == 0 && !maps.EqualFunc(next, cur, bytes.Equal) {
				t.Error("data changed although no renewal was needed")
			}
			if cur != nil && string(next["unrelated"]) != "kept" {
				t.Error("unrelated key was not preserved")
			}
			if sameCA := tc.cur != nil && bytes.Equal(next[SecretCACertKey], tc.cur[SecretCACertKey]); sameCA != tc.wantSameCA {
				t.Errorf("CA kept = %v, want %v", sameCA, tc.wantSameCA)
			}
			if got := next[SecretPreviousCACertKey]; !bytes.Equal(got, tc.wantPrevious) {
				t.Errorf("ca-previous.crt present=%v, want present=%v (or different content)", got != nil, tc.wantPrevious != nil)
			}
			// Whatever happened, the result must satisfy every rule.
			if r := caRenewalReason(next[SecretCACertKey], next[SecretCAKeyKey], tc.now, spec.caRenewBefore); r != "" {
				t.Errorf("planned CA still needs renewal: %s", r)
			}
			newCA := mustParseCert(t, next[SecretCACertKey])
			if r := servingRenewalReason(next[SecretCertKey], next[SecretKeyKey], newCA, spec.dnsNames, spec.ips, tc.now, spec.certRenewBefore); r != "" {
				t.Errorf("planned serving certificate still needs renewal: %s", r)
			}
			// Planning again on the result must be a no-op, or replicas would churn.
			if _, again, err := planSecretData(next, spec, tc.now); err != nil || len(again) != 0 {
				t.Errorf("second plan not a no-op: reasons %q, err %v", again, err)
			}
		})
	}
}
