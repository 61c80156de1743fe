package sources

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSlimInPlace: the informer's transform writes the slimmed copy over
// the decoded object, and the result is what Slim makes.
func TestSlimInPlace(t *testing.T) {
	s := Slimmer{Serves: func(ns string) bool { return ns == "served" }, MaxKeys: 2}
	meta := func(ns string) metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: ns, Name: "x", UID: "u", ResourceVersion: "7", Annotations: map[string]string{lastApplied: "{}"}}
	}
	for name, mk := range map[string]func() any{
		"held secret": func() any {
			return &corev1.Secret{ObjectMeta: meta("served"), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"a": []byte("1"), "b": []byte("2")}}
		},
		"secret over the key bound": func() any {
			return &corev1.Secret{ObjectMeta: meta("served"), Data: map[string][]byte{"a": {1}, "b": {2}, "c": {3}}}
		},
		"placeholder secret": func() any { return &corev1.Secret{ObjectMeta: meta("off"), Data: map[string][]byte{"a": []byte("1")}} },
		"empty secret":       func() any { return &corev1.Secret{ObjectMeta: meta("served")} },
		"held configmap": func() any {
			return &corev1.ConfigMap{ObjectMeta: meta("served"), Data: map[string]string{"a": "1"}, BinaryData: map[string][]byte{"b": {2}}}
		},
		"placeholder configmap": func() any { return &corev1.ConfigMap{ObjectMeta: meta("off"), Data: map[string]string{"a": "1"}} },
	} {
		t.Run(name, func(t *testing.T) {
			want, err := s.Slim(mk())
			if err != nil {
				t.Fatal(err)
			}
			in := mk()
			got, err := s.SlimInPlace(in)
			if err != nil {
				t.Fatal(err)
			}
			if reflect.ValueOf(got).Pointer() != reflect.ValueOf(in).Pointer() {
				t.Error("SlimInPlace made a new object")
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("SlimInPlace gave %+v, Slim %+v", got, want)
			}
			if c1, c2 := contentOrErr(want), contentOrErr(got); !reflect.DeepEqual(c1, c2) {
				t.Errorf("Content differs: %v, %v", c2, c1)
			}
			again, err := s.SlimInPlace(got)
			if err != nil || !reflect.DeepEqual(again, want) {
				t.Errorf("SlimInPlace again gave %+v, %v", again, err)
			}
		})
	}
}

func contentOrErr(obj any) any {
	c, err := Content(obj)
	if err != nil {
		return err.Error()
	}
	return c
}
