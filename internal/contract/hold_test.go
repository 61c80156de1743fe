package contract

import (
	"strings"
	"testing"
	"time"
)

func TestHoldRoundTrip(t *testing.T) {
	at := func(d time.Duration) time.Time { return time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC).Add(d) }
	tests := map[string]struct {
		h    Hold
		want string
	}{
		"first level": {h: Hold{Since: at(0), Level: 0, Quiet: time.Minute}, want: "v1 since=2030-01-02T03:04:05Z level=0 quiet=1m0s"},
		"backoff":     {h: Hold{Since: at(time.Hour), Level: 3, Quiet: 8 * time.Minute}, want: "v1 since=2030-01-02T04:04:05Z level=3 quiet=8m0s"},
		"local time is written as UTC": {
			h:    Hold{Since: at(0).In(time.FixedZone("x", 3600)), Level: 1, Quiet: 2 * time.Minute},
			want: "v1 since=2030-01-02T03:04:05Z level=1 quiet=2m0s",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			s := tc.h.String()
			if s != tc.want {
				t.Errorf("String() = %q, want %q", s, tc.want)
			}
			got, err := ParseHold(s)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Since.Equal(tc.h.Since) || got.Level != tc.h.Level || got.Quiet != tc.h.Quiet {
				t.Errorf("ParseHold(%q) = %+v, want %+v", s, got, tc.h)
			}
		})
	}
}

func TestParseHold(t *testing.T) {
	tests := map[string]struct {
		in      string
		wantErr string // substring; "" means it parses
	}{
		"valid":               {in: "v1 since=2030-01-02T03:04:05Z level=2 quiet=4m0s"},
		"keys in any order":   {in: "v1 quiet=4m0s level=2 since=2030-01-02T03:04:05Z"},
		"unknown key skipped": {in: "v1 since=2030-01-02T03:04:05Z level=2 quiet=4m0s until=soon"},
		"empty":               {in: "", wantErr: `want a value starting "v1"`},
		"other version":       {in: "v2 since=2030-01-02T03:04:05Z level=2 quiet=4m0s", wantErr: `starting "v1"`},
		"not key=value":       {in: "v1 since", wantErr: "not key=value"},
		"bad time":            {in: "v1 since=yesterday level=2 quiet=4m0s", wantErr: "since"},
		"negative level":      {in: "v1 since=2030-01-02T03:04:05Z level=-1 quiet=4m0s", wantErr: "level: negative"},
		"bad quiet":           {in: "v1 since=2030-01-02T03:04:05Z level=1 quiet=long", wantErr: "quiet"},
		"missing quiet":       {in: "v1 since=2030-01-02T03:04:05Z level=1", wantErr: "quiet missing"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := ParseHold(tc.in)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("ParseHold(%q): %v", tc.in, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("ParseHold(%q) error = %v, want one containing %q", tc.in, err, tc.wantErr)
			}
		})
	}
}
