package workload

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/randfill"
)

// TestRegistryFor checks that every registry kind is found by its Go type,
// so that callers holding an object without TypeMeta reach its Kind entry.
func TestRegistryFor(t *testing.T) {
	for _, k := range Kinds() {
		t.Run(k.GVK.Kind, func(t *testing.T) {
			got, ok := Kinds().For(k.New())
			if !ok || got.GVK != k.GVK {
				t.Errorf("For(%T) = %v, %v; want %v", k.New(), got.GVK, ok, k.GVK)
			}
		})
	}
	if _, ok := Kinds().For(&corev1.ConfigMap{}); ok {
		t.Error("For(ConfigMap) found a kind")
	}
}

// TestClearStatus checks that every kind can reset its status and leaves
// other Go types alone.
func TestClearStatus(t *testing.T) {
	for _, k := range Kinds() {
		t.Run(k.GVK.Kind, func(t *testing.T) {
			if k.ClearStatus == nil {
				t.Fatal("no ClearStatus")
			}
			if k.Unstructured() {
				return // an unstructured object: TestCustomKindClearStatus
			}
			obj := k.New()
			st := reflect.ValueOf(obj).Elem().FieldByName("Status")
			if !st.IsValid() {
				t.Fatalf("%T has no Status field", obj)
			}
			randfill.NewWithSeed(1).NilChance(0).Fill(st.Addr().Interface())
			if st.IsZero() {
				t.Fatalf("filling the status of %T left it empty", obj)
			}
			k.ClearStatus(obj)
			if !st.IsZero() {
				t.Errorf("ClearStatus left %+v", st.Interface())
			}
			other := &corev1.ConfigMap{Data: map[string]string{"k": "v"}}
			k.ClearStatus(other)
			if other.Data["k"] != "v" {
				t.Error("ClearStatus changed an object of another type")
			}
		})
	}
}
