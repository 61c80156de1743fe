package certs

import (
	"net"
	"strings"
	"testing"
	"time"
)

func TestCARenewalReason(t *testing.T) {
	day := 24 * time.Hour
	ca := mustCA(t, 30*day, testNow)
	other := mustCA(t, 30*day, testNow)
	leaf := mustServing(t, ca, []string{"webhook"}, nil, 20*day, testNow)

	tests := map[string]struct {
		certPEM, keyPEM []byte
		now             time.Time
		want            string // substring of the reason; "" means no renewal
	}{
		"fine":                   {certPEM: ca.certPEM, keyPEM: ca.keyPEM, now: testNow},
		"missing certificate":    {keyPEM: ca.keyPEM, now: testNow, want: "CA missing"},
		"missing key":            {certPEM: ca.certPEM, now: testNow, want: "CA missing"},
		"unparseable cert":       {certPEM: []byte("not pem"), keyPEM: ca.keyPEM, now: testNow, want: "CA certificate unparseable"},
		"unparseable key":        {certPEM: ca.certPEM, keyPEM: []byte("not pem"), now: testNow, want: "CA key unparseable"},
		"key of another CA":      {certPEM: ca.certPEM, keyPEM: other.keyPEM, now: testNow, want: "does not match"},
		"leaf certificate as CA": {certPEM: leaf.certPEM, keyPEM: leaf.keyPEM, now: testNow, want: "not a CA"},
		"within renewal window":  {certPEM: ca.certPEM, keyPEM: ca.keyPEM, now: testNow.Add(25 * day), want: "within the renewal window"},
		"expired":                {certPEM: ca.certPEM, keyPEM: ca.keyPEM, now: testNow.Add(31 * day), want: "CA expired"},
		"just outside window":    {certPEM: ca.certPEM, keyPEM: ca.keyPEM, now: testNow.Add(19 * day)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := caRenewalReason(tc.certPEM, tc.keyPEM, tc.now, 10*day)
			checkReason(t, got, tc.want)
		})
	}
}

func TestServingRenewalReason(t *testing.T) {
	day := 24 * time.Hour
	ca := mustCA(t, 10*365*day, testNow)
	otherCA := mustCA(t, 10*365*day, testNow)
	names := []string{"webhook.ns.svc", "localhost"}
	ips := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")}
	good := mustServing(t, ca, names, ips, 90*day, testNow)
	upper := mustServing(t, ca, []string{"WEBHOOK.ns.svc", "localhost", "extra.example"}, append(ips, net.ParseIP("10.0.0.1")), 90*day, testNow)
	fromOther := mustServing(t, otherCA, names, ips, 90*day, testNow)
	noIPv6 := mustServing(t, ca, names, ips[:1], 90*day, testNow)
	noLocalhost := mustServing(t, ca, names[:1], ips, 90*day, testNow)
	another := mustServing(t, ca, names, ips, 90*day, testNow)

	tests := map[string]struct {
		certPEM, keyPEM []byte
		now             time.Time
		want            string
	}{
		"fine":                              {certPEM: good.certPEM, keyPEM: good.keyPEM, now: testNow},
		"fine with case and extra SANs":     {certPEM: upper.certPEM, keyPEM: upper.keyPEM, now: testNow},
		"missing":                           {now: testNow, want: "serving certificate missing"},
		"missing key":                       {certPEM: good.certPEM, now: testNow, want: "serving certificate missing"},
		"unparseable certificate":           {certPEM: []byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"), keyPEM: good.keyPEM, now: testNow, want: "unparseable"},
		"key of another certificate":        {certPEM: good.certPEM, keyPEM: another.keyPEM, now: testNow, want: "does not match"},
		"signed by another CA":              {certPEM: fromOther.certPEM, keyPEM: fromOther.keyPEM, now: testNow, want: "not signed by the current CA"},
		"CA certificate instead of serving": {certPEM: ca.certPEM, keyPEM: ca.keyPEM, now: testNow, want: "server-auth"},
		"missing DNS name":                  {certPEM: noLocalhost.certPEM, keyPEM: noLocalhost.keyPEM, now: testNow, want: `lacks DNS name "localhost"`},
		"missing IP":                        {certPEM: noIPv6.certPEM, keyPEM: noIPv6.keyPEM, now: testNow, want: "lacks IP address ::1"},
		"within renewal window":             {certPEM: good.certPEM, keyPEM: good.keyPEM, now: testNow.Add(61 * day), want: "within the renewal window"},
		"expired":                           {certPEM: good.certPEM, keyPEM: good.keyPEM, now: testNow.Add(91 * day), want: "serving certificate expired"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := servingRenewalReason(tc.certPEM, tc.keyPEM, ca.cert, names, ips, tc.now, 30*day)
			checkReason(t, got, tc.want)
		})
	}
}

func TestUsablePreviousCA(t *testing.T) {
	day := 24 * time.Hour
	ca := mustCA(t, 10*day, testNow)
	leaf := mustServing(t, ca, []string{"x"}, nil, day, testNow)
	tests := map[string]struct {
		pem  []byte
		now  time.Time
		want bool
	}{
		"unexpired CA": {pem: ca.certPEM, now: testNow.Add(9 * day), want: true},
		"expired CA":   {pem: ca.certPEM, now: testNow.Add(10 * day)},
		"leaf":         {pem: leaf.certPEM, now: testNow},
		"empty":        {now: testNow},
		"garbage":      {pem: []byte("garbage"), now: testNow},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if _, got := usablePreviousCA(tc.pem, tc.now); got != tc.want {
				t.Errorf("usablePreviousCA = %v, want %v", got, tc.want)
			}
		})
	}
}

func checkReason(t *testing.T, got, want string) {
	t.Helper()
	switch {
	case want == "" && got != "":
		t.Errorf("unexpected renewal: %s", got)
	case want != "" && !strings.Contains(got, want):
		t.Errorf("reason %q, want it to contain %q", got, want)
	}
}
