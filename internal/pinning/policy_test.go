package pinning

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
)

func TestSkipOf(t *testing.T) {
	cm := hasher.Source{Kind: hasher.ConfigMap, Name: "app"}
	sec := hasher.Source{Kind: hasher.Secret, Name: "db"}
	cases := []struct {
		name string
		f    SourceFacts
		want Skip
	}{
		{"configmap", SourceFacts{Source: cm, Found: true}, Pinned},
		{"missing", SourceFacts{Source: cm}, SkipMissing},
		{"never", SourceFacts{Source: cm, Found: true, Annotations: map[string]string{PinAnnotation: PinNever}}, SkipNever},
		{"other pin value pins", SourceFacts{Source: cm, Found: true, Annotations: map[string]string{PinAnnotation: "nope"}}, Pinned},
		{"ignored", SourceFacts{Source: cm, Found: true, Annotations: map[string]string{contract.IgnoreAnnotation: contract.IgnoreTrue}}, SkipIgnored},
		{"untyped secret", SourceFacts{Source: sec, Found: true}, Pinned},
		{"opaque secret", SourceFacts{Source: sec, Found: true, SecretType: corev1.SecretTypeOpaque}, Pinned},
		{"tls secret", SourceFacts{Source: sec, Found: true, SecretType: corev1.SecretTypeTLS}, SkipSecretType},
		{"token secret", SourceFacts{Source: sec, Found: true, SecretType: corev1.SecretTypeServiceAccountToken}, SkipSecretType},
		{"registry secret", SourceFacts{Source: sec, Found: true, SecretType: corev1.SecretTypeDockerConfigJson}, SkipSecretType},
		{"custom type", SourceFacts{Source: sec, Found: true, SecretType: "example.com/thing"}, SkipSecretType},
		{"type of a configmap is not looked at", SourceFacts{Source: cm, Found: true, SecretType: corev1.SecretTypeTLS}, Pinned},
	}
	for _, c := range cases {
		if got := SkipOf(c.f); got != c.want {
			t.Errorf("%s: SkipOf = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestOptIns(t *testing.T) {
	if !NamespacePins(map[string]string{NamespaceLabel: NamespaceEnabled}) || NamespacePins(map[string]string{NamespaceLabel: "true"}) || NamespacePins(nil) {
		t.Error("NamespacePins must need exactly the enabled value")
	}
	if !WorkloadPins(nil) || WorkloadPins(map[string]string{PinAnnotation: PinOff}) {
		t.Error("WorkloadPins must pin unless the workload says off")
	}
}
