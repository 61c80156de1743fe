package workload

import (
	"reflect"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// TestIdentityObjectKeepsOnlyTheIdentity: outside the namespaces served,
// the cache's copy of any mutable kind's object, 1 MiB of bulk or not, is
// its name, namespace, UID and resourceVersion and the mark; ReadsOf
// leaves it alone (SkipNotHeld), so the hook never acts on, and the
// readers index never lists, what it does not hold.
func TestIdentityObjectKeepsOnlyTheIdentity(t *testing.T) {
	for _, k := range Kinds().Mutable() {
		obj := objectOf(t, k, slimCase{name: "i", spec: specReading(2)})
		obj.SetUID("uid-1")
		obj.SetResourceVersion("42")
		id := k.IdentityObject(obj)
		if !IsIdentity(id) || !IsSlim(id) {
			t.Fatalf("%s: not marked as an identity copy: %v", k.Name(), id.GetAnnotations())
		}
		if id.GetName() != obj.GetName() || id.GetNamespace() != obj.GetNamespace() || id.GetUID() != "uid-1" || id.GetResourceVersion() != "42" {
			t.Errorf("%s: identity %s/%s %s %s", k.Name(), id.GetNamespace(), id.GetName(), id.GetUID(), id.GetResourceVersion())
		}
		if r := ReadsOf(k, id); r.Skip != SkipNotHeld || len(r.Refs) != 0 {
			t.Errorf("%s: ReadsOf an identity copy gives %q with %d references, want %q and none", k.Name(), r.Skip, len(r.Refs), SkipNotHeld)
		}
		// Nothing else: an empty object of the kind with that metadata.
		empty := k.New()
		empty.SetName(obj.GetName())
		empty.SetNamespace(obj.GetNamespace())
		empty.SetUID("uid-1")
		empty.SetResourceVersion("42")
		empty.SetCreationTimestamp(obj.GetCreationTimestamp())
		empty.SetAnnotations(map[string]string{slimmedKey: slimIdentity})
		if k.Unstructured() {
			if got, want := len(mustJSON(t, id)), len(mustJSON(t, empty)); got != want {
				t.Errorf("%s: identity copy %s, want %s", k.Name(), mustJSON(t, id), mustJSON(t, empty))
			}
		} else if !reflect.DeepEqual(id, empty) {
			t.Errorf("%s: identity copy %+v, want %+v", k.Name(), id, empty)
		}
		if again := k.IdentityObject(id); again != id {
			t.Errorf("%s: an identity copy is made again", k.Name())
		}
		if slim := k.SlimObject(id); slim != id {
			t.Errorf("%s: SlimObject changed an identity copy", k.Name())
		}
	}
	if got := len(mustJSON(t, kindNamed(t, "Deployment").IdentityObject(bulky1MiB()))); got > 512 {
		t.Errorf("the identity copy of a 1 MiB Deployment encodes to %d bytes", got)
	}
}

// TestTransformKeepsIdentityOutsideServedNamespaces: the cache transform
// slims an object of a served namespace, and keeps only the identity of
// one of any other namespace, in place for a built-in kind.
func TestTransformKeepsIdentityOutsideServedNamespaces(t *testing.T) {
	serves := func(ns string) bool { return ns == "served" }
	tr := Kinds().Transform(serves, func(o any) (any, error) { return o, nil })
	for _, k := range Kinds().Mutable() {
		for ns, identity := range map[string]bool{"served": false, "other": true} {
			in := objectOf(t, k, slimCase{name: "t", spec: specReading(1)})
			in.SetNamespace(ns)
			out, err := tr(in)
			if err != nil {
				t.Fatal(err)
			}
			got := out.(client.Object)
			if IsIdentity(got) != identity || !IsSlim(got) {
				t.Errorf("%s in %s: identity %v, want %v", k.Name(), ns, IsIdentity(got), identity)
			}
			if identity && !k.Unstructured() && reflect.ValueOf(got).Pointer() != reflect.ValueOf(in).Pointer() {
				t.Errorf("%s: the identity copy is a new object", k.Name())
			}
		}
	}
}
