package sources

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/internal/contract"
)

// TestSlimKeepsIgnore: the cache drops every annotation but the one that
// changes how a source enters a checksum, and Content reads it back.
func TestSlimKeepsIgnore(t *testing.T) {
	tests := map[string]struct {
		obj         any
		wantIgnored bool
	}{
		"ignored configmap": {obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a",
			Annotations: map[string]string{contract.IgnoreAnnotation: "true", "other": "x"}}, Data: map[string]string{"k": "v"}}, wantIgnored: true},
		"ignored secret": {obj: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "a",
			Annotations: map[string]string{contract.IgnoreAnnotation: "true"}}, Data: map[string][]byte{"k": []byte("v")}}, wantIgnored: true},
		"not true": {obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a",
			Annotations: map[string]string{contract.IgnoreAnnotation: "True"}}}},
		"no annotation": {obj: &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "a"}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			slim, err := Slim(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			again, err := Slim(slim)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Content(again)
			if err != nil {
				t.Fatal(err)
			}
			if c.Ignored != tc.wantIgnored {
				t.Errorf("Ignored = %v, want %v", c.Ignored, tc.wantIgnored)
			}
			a := again.(metav1.Object).GetAnnotations()
			if _, ok := a["other"]; ok || len(a) > 2 {
				t.Errorf("slimmed annotations %v keep more than the marker and the ignore switch", a)
			}
		})
	}
}
