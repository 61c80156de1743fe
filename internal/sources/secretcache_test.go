package sources

import "testing"

func TestSecretCache(t *testing.T) {
	for name, tc := range map[string]struct {
		ignore bool
		want   string
	}{
		"helm release secrets left out": {ignore: true, want: "type!=helm.sh/release.v1"},
		"every secret cached":           {ignore: false, want: ""},
	} {
		t.Run(name, func(t *testing.T) {
			b := SecretCache(tc.ignore)
			got := ""
			if b.Field != nil {
				got = b.Field.String()
			}
			if got != tc.want {
				t.Errorf("field selector %q, want %q", got, tc.want)
			}
			if b.Transform == nil {
				t.Error("no transform: Secrets would be cached with their values")
			}
		})
	}
}
