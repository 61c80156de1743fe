package hasher

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// scenario is one input to Checksum.
type scenario struct {
	key     string // defaults to testKey
	ns      string // defaults to testNamespace
	refs    []Reference
	objects map[Source]Content
}

const (
	testKey       = "test-key"
	testNamespace = "ns"
)

func (s scenario) checksum(t *testing.T) Result {
	t.Helper()
	key := s.key
	if key == "" {
		key = testKey
	}
	ns := s.ns
	if ns == "" {
		ns = testNamespace
	}
	res, err := Checksum([]byte(key), ns, s.refs, lookupFrom(s.objects))
	if err != nil {
		t.Fatalf("Checksum: %v", err)
	}
	return res
}

func TestChecksumProperties(t *testing.T) {
	app := Source{ConfigMap, "app"}
	db := Source{Secret, "db"}
	tests := map[string]struct {
		a, b scenario
		same bool
	}{
		// The kubelet builds env from data alone (issue 13 section 10).
		"env-only reader: a binaryData change is ignored": {
			a:    scenario{refs: []Reference{envOnly(whole(ConfigMap, "app"))}, objects: map[Source]Content{app: withBinary(dataOf("a", "1"), "b", "1")}},
			b:    scenario{refs: []Reference{envOnly(whole(ConfigMap, "app"))}, objects: map[Source]Content{app: withBinary(dataOf("a", "1"), "b", "2")}},
			same: true,
		},
		"env-only key reader: a binaryData change is ignored": {
			a:    scenario{refs: []Reference{envOnly(keyed(ConfigMap, "app", "b"))}, objects: map[Source]Content{app: withBinary(dataOf("a", "1"), "b", "1")}},
			b:    scenario{refs: []Reference{envOnly(keyed(ConfigMap, "app", "b"))}, objects: map[Source]Content{app: withBinary(dataOf("a", "1"), "b", "2")}},
			same: true,
		},
		"env-only reader: a data change counts": {
			a: scenario{refs: []Reference{envOnly(whole(ConfigMap, "app"))}, objects: map[Source]Content{app: withBinary(dataOf("a", "1"), "b", "1")}},
			b: scenario{refs: []Reference{envOnly(whole(ConfigMap, "app"))}, objects: map[Source]Content{app: withBinary(dataOf("a", "2"), "b", "1")}},
		},
		"volume reader: a binaryData change counts": {
			a: scenario{refs: []Reference{whole(ConfigMap, "app")}, objects: map[Source]Content{app: withBinary(dataOf("a", "1"), "b", "1")}},
			b: scenario{refs: []Reference{whole(ConfigMap, "app")}, objects: map[Source]Content{app: withBinary(dataOf("a", "1"), "b", "2")}},
		},
		"env and volume readers of one ConfigMap: a binaryData change counts": {
			a: scenario{refs: []Reference{envOnly(whole(ConfigMap, "app")), keyed(ConfigMap, "app", "b")}, objects: map[Source]Content{app: withBinary(dataOf("a", "1"), "b", "1")}},
			b: scenario{refs: []Reference{envOnly(whole(ConfigMap, "app")), keyed(ConfigMap, "app", "b")}, objects: map[Source]Content{app: withBinary(dataOf("a", "1"), "b", "2")}},
		},
		"env-only or not: the same stamp without binaryData": {
			a:    scenario{refs: []Reference{envOnly(whole(ConfigMap, "app"))}, objects: map[Source]Content{app: dataOf("a", "1")}},
			b:    scenario{refs: []Reference{whole(ConfigMap, "app")}, objects: map[Source]Content{app: dataOf("a", "1")}},
			same: true,
		},
		"unreferenced key change is ignored": {
			a:    scenario{refs: []Reference{keyed(ConfigMap, "app", "a")}, objects: map[Source]Content{app: dataOf("a", "1", "b", "2")}},
			b:    scenario{refs: []Reference{keyed(ConfigMap, "app", "a")}, objects: map[Source]Content{app: dataOf("a", "1", "b", "3")}},
			same: true,
		},
		"referenced key change is detected": {
			a: scenario{refs: []Reference{keyed(ConfigMap, "app", "a")}, objects: map[Source]Content{app: dataOf("a", "1", "b", "2")}},
			b: scenario{refs: []Reference{keyed(ConfigMap, "app", "a")}, objects: map[Source]Content{app: dataOf("a", "9", "b", "2")}},
		},
		"whole object covers every key": {
			a: scenario{refs: []Reference{whole(ConfigMap, "app")}, objects: map[Source]Content{app: dataOf("a", "1", "b", "2")}},
			b: scenario{refs: []Reference{whole(ConfigMap, "app")}, objects: map[Source]Content{app: dataOf("a", "1", "b", "3")}},
		},
		"k=v; joining ambiguity": {
			a: scenario{refs: []Reference{whole(ConfigMap, "app")}, objects: map[Source]Content{app: dataOf("a", "b;c=d")}},
			b: scenario{refs: []Reference{whole(ConfigMap, "app")}, objects: map[Source]Content{app: dataOf("a", "b", "c", "d")}},
		},
		"key=value boundary": {
			a: scenario{refs: []Reference{whole(ConfigMap, "app")}, objects: map[Source]Content{app: dataOf("a", "b")}},
			b: scenario{refs: []Reference{whole(ConfigMap, "app")}, objects: map[Source]Content{app: dataOf("a=b", "")}},
		},
		"name/key boundary": {
			a: scenario{refs: []Reference{keyed(ConfigMap, "a", "bc")}, objects: map[Source]Content{{ConfigMap, "a"}: dataOf("bc", "v")}},
			b: scenario{refs: []Reference{keyed(ConfigMap, "ab", "c")}, objects: map[Source]Content{{ConfigMap, "ab"}: dataOf("c", "v")}},
		},
		"kind is covered": {
			a: scenario{refs: []Reference{whole(ConfigMap, "x")}, objects: map[Source]Content{{ConfigMap, "x"}: dataOf("k", "v")}},
			b: scenario{refs: []Reference{whole(Secret, "x")}, objects: map[Source]Content{{Secret, "x"}: dataOf("k", "v")}},
		},
		"data vs binaryData": {
			a: scenario{refs: []Reference{whole(ConfigMap, "app")}, objects: map[Source]Content{app: dataOf("k", "v")}},
			b: scenario{refs: []Reference{whole(ConfigMap, "app")}, objects: map[Source]Content{app: binaryDataOf("k", "v")}},
		},
		"binaryData change is detected": {
			a: scenario{refs: []Reference{whole(ConfigMap, "app")}, objects: map[Source]Content{app: binaryDataOf("k", "\x00\x01")}},
			b: scenario{refs: []Reference{whole(ConfigMap, "app")}, objects: map[Source]Content{app: binaryDataOf("k", "\x00\x02")}},
		},
		"listed binaryData key is read": {
			a: scenario{refs: []Reference{keyed(ConfigMap, "app", "k")}, objects: map[Source]Content{app: binaryDataOf("k", "1")}},
			b: scenario{refs: []Reference{keyed(ConfigMap, "app", "k")}, objects: map[Source]Content{app: binaryDataOf("k", "2")}},
		},
		"key in both fields is read from both": {
			a: scenario{refs: []Reference{keyed(ConfigMap, "app", "k")}, objects: map[Source]Content{app: dataOf("k", "v")}},
			b: scenario{refs: []Reference{keyed(ConfigMap, "app", "k")}, objects: map[Source]Content{app: {
				Data:       dataOf("k", "v").Data,
				BinaryData: binaryDataOf("k", "v").BinaryData,
			}}},
		},
		"refs order does not matter": {
			a: scenario{
				refs:    []Reference{whole(ConfigMap, "app"), keyed(Secret, "db", "u"), whole(ConfigMap, "b")},
				objects: map[Source]Content{app: dataOf("a", "1"), db: dataOf("u", "x"), {ConfigMap, "b"}: dataOf()},
			},
			b: scenario{
				refs:    []Reference{keyed(Secret, "db", "u"), whole(ConfigMap, "b"), whole(ConfigMap, "app")},
				objects: map[Source]Content{app: dataOf("a", "1"), db: dataOf("u", "x"), {ConfigMap, "b"}: dataOf()},
			},
			same: true,
		},
		"keys order does not matter": {
			a:    scenario{refs: []Reference{keyed(Secret, "db", "a", "b", "c")}, objects: map[Source]Content{db: dataOf("a", "1", "c", "3")}},
			b:    scenario{refs: []Reference{keyed(Secret, "db", "c", "a", "b", "a")}, objects: map[Source]Content{db: dataOf("c", "3", "a", "1")}},
			same: true,
		},
		"duplicate refs merge": {
			a:    scenario{refs: []Reference{keyed(Secret, "db", "a"), keyed(Secret, "db", "b")}, objects: map[Source]Content{db: dataOf("a", "1", "b", "2")}},
			b:    scenario{refs: []Reference{keyed(Secret, "db", "a", "b")}, objects: map[Source]Content{db: dataOf("a", "1", "b", "2")}},
			same: true,
		},
		"whole read vs key list of the same content": {
			a: scenario{refs: []Reference{whole(ConfigMap, "app")}, objects: map[Source]Content{app: dataOf("a", "1")}},
			b: scenario{refs: []Reference{keyed(ConfigMap, "app", "a")}, objects: map[Source]Content{app: dataOf("a", "1")}},
		},
		"absent vs empty": {
			a: scenario{refs: []Reference{optional(whole(ConfigMap, "app"))}},
			b: scenario{refs: []Reference{optional(whole(ConfigMap, "app"))}, objects: map[Source]Content{app: {}}},
		},
		"empty vs present": {
			a: scenario{refs: []Reference{optional(whole(ConfigMap, "app"))}, objects: map[Source]Content{app: {}}},
			b: scenario{refs: []Reference{optional(whole(ConfigMap, "app"))}, objects: map[Source]Content{app: dataOf("a", "")}},
		},
		"absent source vs present without the listed key": {
			a: scenario{refs: []Reference{keyed(Secret, "db", "k")}},
			b: scenario{refs: []Reference{keyed(Secret, "db", "k")}, objects: map[Source]Content{db: {}}},
		},
		"listed key appearing later": {
			a: scenario{refs: []Reference{keyed(Secret, "db", "a", "k")}, objects: map[Source]Content{db: dataOf("a", "1")}},
			b: scenario{refs: []Reference{keyed(Secret, "db", "a", "k")}, objects: map[Source]Content{db: dataOf("a", "1", "k", "")}},
		},
		"optional flag alone does not change the checksum": {
			a:    scenario{refs: []Reference{whole(Secret, "db")}},
			b:    scenario{refs: []Reference{optional(whole(Secret, "db"))}},
			same: true,
		},
		// The oracle this closes: a user who may create a Secret named db in
		// their namespace must not be able to test a guess of db in another
		// namespace by comparing stamps.
		"same Secret in two namespaces": {
			a: scenario{ns: "team-a", refs: []Reference{whole(Secret, "db")}, objects: map[Source]Content{db: dataOf("p", "hunter2")}},
			b: scenario{ns: "team-b", refs: []Reference{whole(Secret, "db")}, objects: map[Source]Content{db: dataOf("p", "hunter2")}},
		},
		"namespace is length-prefixed, not joined to the kind": {
			a: scenario{ns: "aSecret", refs: []Reference{whole(Secret, "db")}},
			b: scenario{ns: "a", refs: []Reference{whole(Secret, "db")}},
		},
		"different HMAC keys": {
			a: scenario{key: "key-1", refs: []Reference{whole(Secret, "db")}, objects: map[Source]Content{db: dataOf("p", "hunter2")}},
			b: scenario{key: "key-2", refs: []Reference{whole(Secret, "db")}, objects: map[Source]Content{db: dataOf("p", "hunter2")}},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			a, b := tt.a.checksum(t).Checksum, tt.b.checksum(t).Checksum
			if (a == b) != tt.same {
				t.Errorf("checksums a=%s b=%s; want same=%v", a, b, tt.same)
			}
		})
	}
}

func TestChecksumMapOrderDoesNotMatter(t *testing.T) {
	// Map iteration order is randomised per range loop, so repeating the
	// computation over large maps exercises many orders.
	c := Content{Data: map[string]Digest{}, BinaryData: map[string]Digest{}}
	for i := range 64 {
		c.Data[fmt.Sprint("k", i)] = DigestOf([]byte(fmt.Sprint(i)))
		c.BinaryData[fmt.Sprint("b", i)] = DigestOf([]byte(fmt.Sprint(i)))
	}
	s := scenario{refs: []Reference{whole(ConfigMap, "app")}, objects: map[Source]Content{{ConfigMap, "app"}: c}}
	first := s.checksum(t).Checksum
	for range 20 {
		if got := s.checksum(t).Checksum; got != first {
			t.Fatalf("checksum changed between runs: %s vs %s", first, got)
		}
	}
}

func TestChecksumMissing(t *testing.T) {
	s := scenario{
		refs: []Reference{
			whole(Secret, "z-required"),
			optional(whole(Secret, "optional")),
			keyed(ConfigMap, "required", "k"),
			whole(ConfigMap, "present"),
		},
		objects: map[Source]Content{{ConfigMap, "present"}: {}},
	}
	res := s.checksum(t)
	want := []Source{{ConfigMap, "required"}, {Secret, "z-required"}}
	if !reflect.DeepEqual(res.Missing, want) {
		t.Errorf("Missing = %v, want %v", res.Missing, want)
	}
	if res.Checksum == "" {
		t.Error("Checksum is empty; missing sources must still be hashed, as absent")
	}
}

func TestChecksumNoRefs(t *testing.T) {
	res, err := Checksum([]byte(testKey), testNamespace, nil, nil)
	if err != nil || !reflect.DeepEqual(res, Result{}) {
		t.Errorf("Checksum(no refs) = %+v, %v; want zero Result", res, err)
	}
}

func TestChecksumEmptyKey(t *testing.T) {
	if _, err := Checksum(nil, testNamespace, []Reference{whole(Secret, "db")}, lookupFrom(nil)); err == nil {
		t.Error("Checksum with empty key succeeded, want error")
	}
}

func TestChecksumLookupError(t *testing.T) {
	boom := errors.New("apiserver unavailable")
	lookup := func(Source) (Content, bool, error) { return Content{}, false, boom }
	_, err := Checksum([]byte(testKey), testNamespace, []Reference{whole(Secret, "db")}, lookup)
	if !errors.Is(err, boom) {
		t.Fatalf("error = %v, want wrapping %v", err, boom)
	}
	if !strings.Contains(err.Error(), "secret/db") {
		t.Errorf("error %q does not name the source", err)
	}
}

func TestChecksumIgnoresContentOfAbsentSource(t *testing.T) {
	refs := []Reference{whole(Secret, "db")}
	stale := func(Source) (Content, bool, error) { return dataOf("k", "v"), false, nil }
	got, err := Checksum([]byte(testKey), testNamespace, refs, stale)
	if err != nil {
		t.Fatal(err)
	}
	if want := (scenario{refs: refs}).checksum(t); got.Checksum != want.Checksum {
		t.Errorf("content returned with found=false changed the checksum")
	}
}

func TestChecksumDoesNotModifyRefs(t *testing.T) {
	refs := []Reference{keyed(Secret, "db", "b", "a", "b"), whole(ConfigMap, "app")}
	before := fmt.Sprint(refs)
	(scenario{refs: refs}).checksum(t)
	if after := fmt.Sprint(refs); after != before {
		t.Errorf("refs changed from %s to %s", before, after)
	}
}

func TestChecksumIsVersionedKeyedHMAC(t *testing.T) {
	refs := []Reference{whole(Secret, "db")}
	objects := map[Source]Content{{Secret, "db"}: dataOf("password", "hunter2")}
	res := (scenario{refs: refs, objects: objects}).checksum(t)

	if !regexp.MustCompile(`^v2:[0-9a-f]{16}:[0-9a-f]{64}$`).MatchString(res.Checksum) {
		t.Fatalf("Checksum = %q, want v2:, a 16-hex key ID, a colon and 64 lowercase hex digits", res.Checksum)
	}
	got := strings.TrimPrefix(res.Checksum, Version+":"+KeyID([]byte(testKey))+":")

	pre := newPreimage(testNamespace, 1)
	pre.addSource(refs[0], objects[Source{Secret, "db"}], true)
	mac := hmac.New(sha256.New, []byte(testKey))
	mac.Write(pre.bytes())
	if want := hex.EncodeToString(mac.Sum(nil)); got != want {
		t.Errorf("Checksum is not HMAC-SHA256(key, pre-image): got %s, want %s", got, want)
	}

	// Nothing a reader of the stamp could compute without the key.
	for name, unkeyed := range map[string][]byte{
		"pre-image": pre.bytes(),
		"value":     []byte("hunter2"),
	} {
		sum := sha256.Sum256(unkeyed)
		if got == hex.EncodeToString(sum[:]) {
			t.Errorf("Checksum equals the unkeyed SHA-256 of the %s", name)
		}
	}
}

// withBinary adds binaryData key/value pairs to c.
func withBinary(c Content, kv ...string) Content {
	c.BinaryData = binaryDataOf(kv...).BinaryData
	return c
}
