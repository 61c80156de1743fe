package hasher

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// update is the conventional golden-file flag; a package-level flag is the
// only way the testing package offers to receive it.
var update = flag.Bool("update", false, "rewrite the expected values in testdata/golden.json")

const goldenPath = "testdata/golden.json"

// goldenCase is one test vector. Inputs are plain values so that the file can
// be read, and reimplemented against, without this package.
type goldenCase struct {
	Name      string                  `json:"name"`
	Key       string                  `json:"key"`
	Namespace string                  `json:"namespace"`
	Refs      []goldenRef             `json:"refs"`
	Objects   map[string]goldenObject `json:"objects,omitempty"` // by Source string; absent sources are left out

	Checksum string   `json:"checksum"`
	Missing  []string `json:"missing,omitempty"`
}

type goldenRef struct {
	Source   string   `json:"source"`
	AllKeys  bool     `json:"allKeys,omitempty"`
	Keys     []string `json:"keys,omitempty"`
	Optional bool     `json:"optional,omitempty"`
	// EnvOnly: only env and envFrom read the ConfigMap; its binaryData is
	// then not hashed.
	EnvOnly bool `json:"envOnly,omitempty"`
}

type goldenObject struct {
	Data       map[string]string `json:"data,omitempty"`
	BinaryData map[string]string `json:"binaryData,omitempty"`
	// Annotations matter only for contract.IgnoreAnnotation.
	Annotations map[string]string `json:"annotations,omitempty"`
}

// TestGolden pins the checksum format: if it fails, the pre-image changed.
// Either that is a bug, or it is deliberate and Version must change too;
// only then regenerate with: go test ./hasher -run Golden -update
func TestGolden(t *testing.T) {
	raw, err := os.ReadFile(goldenPath)
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatalf("parse %s: %v", goldenPath, err)
	}

	for i := range cases {
		c := &cases[i]
		t.Run(c.Name, func(t *testing.T) {
			res, err := Checksum([]byte(c.Key), c.Namespace, c.refs(t), c.lookup(t))
			if err != nil {
				t.Fatalf("Checksum: %v", err)
			}
			var missing []string
			for _, src := range res.Missing {
				missing = append(missing, src.String())
			}
			if *update {
				c.Checksum, c.Missing = res.Checksum, missing
			}
			if res.Checksum != c.Checksum {
				t.Errorf("checksum = %s, want %s", res.Checksum, c.Checksum)
			}
			if !reflect.DeepEqual(missing, c.Missing) {
				t.Errorf("missing = %v, want %v", missing, c.Missing)
			}
		})
	}

	if *update {
		writeGolden(t, cases)
	}
}

func (c *goldenCase) refs(t *testing.T) []Reference {
	t.Helper()
	var refs []Reference
	for _, r := range c.Refs {
		src, err := ParseSource(r.Source)
		if err != nil {
			t.Fatalf("ref: %v", err)
		}
		refs = append(refs, Reference{Source: src, AllKeys: r.AllKeys, Keys: r.Keys, Optional: r.Optional, EnvOnly: r.EnvOnly})
	}
	return refs
}

// lookup builds content through ConfigMapContent and SecretContent, so the
// vectors cover the path real objects take.
func (c *goldenCase) lookup(t *testing.T) Lookup {
	t.Helper()
	objects := make(map[Source]Content, len(c.Objects))
	for name, obj := range c.Objects {
		src, err := ParseSource(name)
		if err != nil {
			t.Fatalf("object: %v", err)
		}
		switch src.Kind {
		case ConfigMap:
			cm := &corev1.ConfigMap{Data: obj.Data, BinaryData: map[string][]byte{}}
			cm.Annotations = obj.Annotations
			for k, v := range obj.BinaryData {
				cm.BinaryData[k] = []byte(v)
			}
			objects[src] = ConfigMapContent(cm)
		case Secret:
			if len(obj.BinaryData) > 0 {
				t.Fatalf("object %s: secrets have no binaryData", name)
			}
			s := &corev1.Secret{Data: map[string][]byte{}}
			s.Annotations = obj.Annotations
			for k, v := range obj.Data {
				s.Data[k] = []byte(v)
			}
			objects[src] = SecretContent(s)
		}
	}
	return lookupFrom(objects)
}

func writeGolden(t *testing.T, cases []goldenCase) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(cases); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goldenPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("rewrote %s", goldenPath)
}
