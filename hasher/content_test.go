package hasher

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestConfigMapContent(t *testing.T) {
	cm := &corev1.ConfigMap{
		Data:       map[string]string{"a": "1"},
		BinaryData: map[string][]byte{"b": {0, 1}},
	}
	want := Content{
		Data:       map[string]Digest{"a": DigestOf([]byte("1"))},
		BinaryData: map[string]Digest{"b": DigestOf([]byte{0, 1})},
	}
	if got := ConfigMapContent(cm); !reflect.DeepEqual(got, want) {
		t.Errorf("ConfigMapContent() = %+v, want %+v", got, want)
	}
}

func TestSecretContentIgnoresStringData(t *testing.T) {
	s := &corev1.Secret{
		Data:       map[string][]byte{"a": []byte("1")},
		StringData: map[string]string{"b": "2"},
	}
	want := Content{Data: map[string]Digest{"a": DigestOf([]byte("1"))}}
	if got := SecretContent(s); !reflect.DeepEqual(got, want) {
		t.Errorf("SecretContent() = %+v, want %+v", got, want)
	}
}

func TestContentOfNilOrEmptyIsEmpty(t *testing.T) {
	for name, got := range map[string]Content{
		"nil configmap":   ConfigMapContent(nil),
		"empty configmap": ConfigMapContent(&corev1.ConfigMap{}),
		"nil secret":      SecretContent(nil),
		"empty secret":    SecretContent(&corev1.Secret{}),
	} {
		if len(got.Data)+len(got.BinaryData) != 0 {
			t.Errorf("%s: content = %+v, want empty", name, got)
		}
	}
}
