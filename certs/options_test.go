package certs

import (
	"net"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

func TestOptionsDefaultsAndValidation(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "webhook-certs"}
	tests := map[string]struct {
		opts    Options
		wantErr string // substring; "" means valid
	}{
		"minimal":                         {opts: Options{SecretKey: key, DNSNames: []string{"webhook.ns.svc"}}},
		"IP only":                         {opts: Options{SecretKey: key, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}},
		"no SANs":                         {opts: Options{SecretKey: key}, wantErr: "at least one of DNSNames or IPAddresses"},
		"no namespace":                    {opts: Options{SecretKey: types.NamespacedName{Name: "x"}, DNSNames: []string{"a"}}, wantErr: "SecretKey"},
		"empty DNS name":                  {opts: Options{SecretKey: key, DNSNames: []string{""}}, wantErr: "empty name"},
		"invalid IP":                      {opts: Options{SecretKey: key, IPAddresses: []net.IP{{1, 2, 3}}}, wantErr: "invalid IP"},
		"cert outlives CA":                {opts: Options{SecretKey: key, DNSNames: []string{"a"}, CAValidity: time.Hour, CertValidity: 2 * time.Hour}, wantErr: "must not exceed CAValidity"},
		"renew before >= cert":            {opts: Options{SecretKey: key, DNSNames: []string{"a"}, CertValidity: time.Hour, RenewBefore: time.Hour}, wantErr: "RenewBefore"},
		"negative duration":               {opts: Options{SecretKey: key, DNSNames: []string{"a"}, CheckInterval: -time.Second}, wantErr: "negative"},
		"overlap within a check interval": {opts: Options{SecretKey: key, DNSNames: []string{"a"}, CheckInterval: time.Hour, CAOverlap: 65 * time.Minute}, wantErr: "CAOverlap"},
		"short-lived e2e rotation": {opts: Options{
			SecretKey: key, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
			CAValidity: time.Hour, CertValidity: 10 * time.Minute, RenewBefore: 5 * time.Minute,
		}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := tc.opts.withDefaults().validate()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}

	o := Options{}.withDefaults()
	if o.CAValidity != DefaultCAValidity || o.CertValidity != DefaultCertValidity || o.CheckInterval != DefaultCheckInterval || o.FieldOwner != DefaultFieldOwner {
		t.Errorf("defaults not applied: %+v", o)
	}
	if o.CAPropagationDelay != DefaultCAPropagationDelay || o.CAOverlap != DefaultCAOverlap {
		t.Errorf("rotation defaults not applied: %s, %s", o.CAPropagationDelay, o.CAOverlap)
	}
	if o := (Options{CheckInterval: 48 * time.Hour}).withDefaults(); o.CAOverlap != 96*time.Hour {
		t.Errorf("CAOverlap %s with a 48h CheckInterval, want twice that", o.CAOverlap)
	}
	if o.caRenewBefore() != DefaultCAValidity/3 || o.certRenewBefore() != DefaultCertValidity/3 {
		t.Errorf("default renew windows %s/%s, want a third of each validity", o.caRenewBefore(), o.certRenewBefore())
	}
}

func TestNewReportsInvalidOptions(t *testing.T) {
	m := New(nil, Options{})
	if err := m.Ensure(t.Context()); err == nil || !strings.Contains(err.Error(), "nil client") {
		t.Errorf("Ensure error %v, want invalid options", err)
	}
	if err := m.Ready(nil); err == nil {
		t.Error("Ready is nil for a misconfigured manager")
	}
}
