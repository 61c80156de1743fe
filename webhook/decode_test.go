package webhook

import "testing"

// TestPlainTypeKeys: the one-pass decoding is taken only where
// encoding/json, which the deserializer's first pass uses, could not read
// another apiVersion or kind than a case-sensitive decoding does.
func TestPlainTypeKeys(t *testing.T) {
	tests := map[string]bool{
		`{"apiVersion":"apps/v1","kind":"Deployment","spec":{"x":"kind"}}`: true,
		`{"apiVersion":"apps/v1","kind":"Deployment","Kind":"Pod"}`:        false,
		`{"APIVERSION":"v1","kind":"Deployment"}`:                          false,
		`{"kind":"Deployment","metadata":{"name":"ü"}}`:                    false,
		`{"\u006bind":"Pod"}`:                 false,
		`{"kind":"Deployment","x":"\\u"}`:     false,
		`{"kind":"Deployment","x":"kindred"}`: true,
		``:                                    true,
	}
	for data, want := range tests {
		if got := plainTypeKeys([]byte(data)); got != want {
			t.Errorf("plainTypeKeys(%s) = %v, want %v", data, got, want)
		}
	}
}
