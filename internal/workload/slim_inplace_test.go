package workload

import (
	"reflect"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestTransformSlimsInPlace: the cache transform writes a built-in kind's
// slimmed copy over the decoded object, and the result is what SlimObject
// makes of the same object, read the same (ReadsOf).
func TestTransformSlimsInPlace(t *testing.T) {
	tr := Kinds().Transform(nil, func(o any) (any, error) { return o, nil })
	for _, k := range Kinds().Mutable() {
		c := slimCase{name: "p", spec: specReading(2)}
		want := k.SlimObject(objectOf(t, k, c))
		in := objectOf(t, k, c)
		out, err := tr(in)
		if err != nil {
			t.Fatal(err)
		}
		got := out.(client.Object)
		if !k.Unstructured() && reflect.ValueOf(got).Pointer() != reflect.ValueOf(in).Pointer() {
			t.Errorf("%s: the transform made a new object", k.Name())
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the transform gave %+v, SlimObject %+v", k.Name(), got, want)
		}
		if a, b := ReadsOf(k, got), ReadsOf(k, want); !reflect.DeepEqual(a.Refs, b.Refs) || a.Skip != b.Skip {
			t.Errorf("%s: reads %+v, want %+v", k.Name(), a, b)
		}
	}
}
