package app

import (
	"strings"
	"testing"

	"github.com/confighash/confighash/internal/sources"
	"github.com/confighash/confighash/webhook"
)

func TestRequestLimitFlags(t *testing.T) {
	tests := map[string]struct {
		args    []string
		want    Options // only the limit fields are compared
		wantErr string
	}{
		"defaults": {
			want: Options{Webhook: webhook.Options{MaxInFlight: 8, MaxConnsPerAddress: 32}, LiveReadsPerRequest: 8, MemoryLimitRatio: 0.9},
		},
		"set": {
			args: []string{"--webhook-max-in-flight=2", "--webhook-max-connections-per-address=3", "--live-reads-per-request=1", "--memory-limit-ratio=0"},
			want: Options{Webhook: webhook.Options{MaxInFlight: 2, MaxConnsPerAddress: 3}, LiveReadsPerRequest: 1, MemoryLimitRatio: 0},
		},
		"no slots":        {args: []string{"--webhook-max-in-flight=0"}, wantErr: "--webhook-max-in-flight"},
		"no connections":  {args: []string{"--webhook-max-connections-per-address=0"}, wantErr: "--webhook-max-connections-per-address"},
		"no live reads":   {args: []string{"--live-reads-per-request=0"}, wantErr: "--live-reads-per-request"},
		"ratio above one": {args: []string{"--memory-limit-ratio=1.5"}, wantErr: "--memory-limit-ratio"},
		"no source keys":  {args: []string{"--max-source-keys=0"}, wantErr: "--max-source-keys"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := parsedServe(t, tc.args...)
			_, err := o.validate()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("validate() = %v, want an error naming %s", err, tc.wantErr)
				}
				// Each error names the one flag at fault.
				for _, other := range []string{"--webhook-max-in-flight", "--webhook-max-connections-per-address", "--live-reads-per-request", "--memory-limit-ratio", "--max-source-keys"} {
					if other != tc.wantErr && strings.Contains(err.Error(), other) {
						t.Errorf("validate() = %v, names %s too", err, other)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("validate(): %v", err)
			}
			if o.Webhook != tc.want.Webhook || o.LiveReadsPerRequest != tc.want.LiveReadsPerRequest || o.MemoryLimitRatio != tc.want.MemoryLimitRatio {
				t.Errorf("limits = %+v, %d, %v; want %+v, %d, %v", o.Webhook, o.LiveReadsPerRequest, o.MemoryLimitRatio,
					tc.want.Webhook, tc.want.LiveReadsPerRequest, tc.want.MemoryLimitRatio)
			}
		})
	}
}

// TestMaxSourceKeysFlag: the key bound defaults to the sources package's,
// and the flag reaches the cache's transform and the live reads alike.
func TestMaxSourceKeysFlag(t *testing.T) {
	if d := DefaultOptions().MaxSourceKeys; d != sources.DefaultMaxKeys {
		t.Errorf("default --max-source-keys = %d, want %d", d, sources.DefaultMaxKeys)
	}
	o := parsedServe(t, "--max-source-keys=5000")
	if _, err := o.validate(); err != nil {
		t.Fatal(err)
	}
	sc := newSourceCache(t.Context(), o)
	if sc.slimmer.MaxKeys != 5000 {
		t.Errorf("transform bound %d, want 5000", sc.slimmer.MaxKeys)
	}
}
