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
		caPropagation:   5 * time.Minute,
		caOverlap:       day,
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
	livePrev := mustCA(t, spec.caValidity, testNow.Add(-day))
	wrongSAN := mustServing(t, ca, []string{"other.ns.svc"}, spec.ips, spec.certValidity, testNow)

	tests := map[string]struct {
		cur          map[string][]byte
		now          time.Time
		wantReasons  []string // substrings, in order; none means unchanged
		wantSameCA   bool
		wantPrevious []byte // expected ca-previous.crt; nil means absent
		wantNext     bool   // a next CA is published
	}{
		"empty secret": {
			cur:         nil,
			now:         testNow,
			wantReasons: []string{"CA missing", "CA switched"},
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
		"CA near expiry: next CA published, nothing signed with it": {
			cur:         valid,
			now:         testNow.Add(2500 * day),
			wantReasons: []string{"within the renewal window of 28800h0m0s; publishing the next CA", "serving certificate expired"},
			wantSameCA:  true,
			wantNext:    true,
		},
		"CA expired: replaced at once, previous not kept": {
			cur:         valid,
			now:         testNow.Add(3651 * day),
			wantReasons: []string{"CA expired at 2041-03-11T12:00:00Z; replacing it at once", "CA switched"},
		},
		"previous CA without an end of overlap (older version) gets one": {
			cur:          with(map[string][]byte{SecretPreviousCACertKey: livePrev.certPEM}),
			now:          testNow,
			wantReasons:  []string{"previous CA has no end of overlap; bounding it"},
			wantSameCA:   true,
			wantPrevious: livePrev.certPEM,
		},
		"previous CA within its overlap kept": {
			cur:          with(map[string][]byte{SecretPreviousCACertKey: livePrev.certPEM, SecretPreviousCAUntilKey: formatTime(testNow.Add(time.Second))}),
			now:          testNow,
			wantSameCA:   true,
			wantPrevious: livePrev.certPEM,
		},
		"previous CA past its overlap dropped": {
			cur:         with(map[string][]byte{SecretPreviousCACertKey: livePrev.certPEM, SecretPreviousCAUntilKey: formatTime(testNow)}),
			now:         testNow,
			wantReasons: []string{"previous CA overlap ended"},
			wantSameCA:  true,
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
			next, reasons, err := planSecretData(cur, spec, tc.now, trustNothing)
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
			if _, got := next[SecretNextCACertKey]; got != tc.wantNext {
				t.Errorf("next CA published = %v, want %v", got, tc.wantNext)
			}
			// Whatever happened, the result must satisfy every rule (the
			// current CA of a rotation under way stays until the switch).
			if r := caRenewalReason(next[SecretCACertKey], next[SecretCAKeyKey], tc.now, spec.caRenewBefore); r != "" && !tc.wantNext {
				t.Errorf("planned CA still needs renewal: %s", r)
			}
			newCA := mustParseCert(t, next[SecretCACertKey])
			if r := servingRenewalReason(next[SecretCertKey], next[SecretKeyKey], newCA, spec.dnsNames, spec.ips, tc.now, spec.certRenewBefore); r != "" {
				t.Errorf("planned serving certificate still needs renewal: %s", r)
			}
			// Planning again on the result must be a no-op, or replicas would churn.
			if _, again, err := planSecretData(next, spec, tc.now, trustNothing); err != nil || len(again) != 0 {
				t.Errorf("second plan not a no-op: reasons %q, err %v", again, err)
			}
		})
	}
}
