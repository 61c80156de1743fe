package preview

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
)

// MaxInputBytes bounds what Parse reads. The apiserver refuses a request
// body over 3 MiB and a ConfigMap's or Secret's data over 1 MiB; 4 MiB
// leaves room for YAML's and base64's overhead on the largest object it
// would accept, and keeps a wrong file (an image, a log) from being read
// whole into memory.
const MaxInputBytes = 4 << 20

// Input is the changed source, as it would be applied.
type Input struct {
	Source hasher.Source
	// Namespace is the object's metadata.namespace, or "" when it has none.
	Namespace string
	// Object is the *corev1.ConfigMap or *corev1.Secret, a Secret's
	// stringData merged into its data as the apiserver merges it.
	Object client.Object
}

// InputError is a problem with the input itself: exit 2, as a bad command
// line. Its text never quotes the input, only its place (a line or an
// offset) and its type fields.
type InputError struct{ msg string }

func (e *InputError) Error() string { return e.msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{msg: fmt.Sprintf(format, args...)}
}

// Parse reads one ConfigMap or Secret, YAML or JSON, from r. It refuses
// more than MaxInputBytes, several objects (a List, or several YAML
// documents), and anything else than a v1 ConfigMap or Secret with a name.
func Parse(r io.Reader) (*Input, error) {
	raw, err := io.ReadAll(io.LimitReader(r, MaxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the input: %w", err)
	}
	if len(raw) > MaxInputBytes {
		return nil, inputErrorf("the input is over %d MiB: no ConfigMap or Secret the apiserver accepts is that large", MaxInputBytes>>20)
	}
	var docs []map[string]any
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(raw), 4096)
	for {
		var doc map[string]any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, inputErrorf("the input is not valid YAML or JSON%s", where(err))
		}
		if len(doc) > 0 { // an empty document ("---" alone, comments)
			docs = append(docs, doc)
		}
	}
	switch len(docs) {
	case 0:
		return nil, inputErrorf("the input holds no object: want one ConfigMap or Secret")
	case 1:
	default:
		return nil, inputErrorf("the input holds %d objects: preview takes one ConfigMap or Secret", len(docs))
	}
	doc := docs[0]
	apiVersion, _ := doc["apiVersion"].(string)
	kind, _ := doc["kind"].(string)
	if _, isList := doc["items"]; isList {
		return nil, inputErrorf("the input is a list (kind %q): preview takes one ConfigMap or Secret", short(kind))
	}
	var obj client.Object
	switch {
	case apiVersion == "v1" && kind == string(hasher.ConfigMap):
		obj = &corev1.ConfigMap{}
	case apiVersion == "v1" && kind == string(hasher.Secret):
		obj = &corev1.Secret{}
	default:
		return nil, inputErrorf("the input is kind %q of apiVersion %q: want a v1 ConfigMap or Secret", short(kind), short(apiVersion))
	}
	if err := decodeTyped(doc, obj); err != nil {
		return nil, err
	}
	if obj.GetName() == "" {
		return nil, inputErrorf("the %s has no metadata.name", kind)
	}
	if s, ok := obj.(*corev1.Secret); ok {
		mergeStringData(s)
	}
	if err := validNames(obj); err != nil {
		return nil, err
	}
	return &Input{Source: hasher.Source{Kind: hasher.Kind(kind), Name: obj.GetName()}, Namespace: obj.GetNamespace(), Object: obj}, nil
}

// decodeTyped decodes doc into obj through JSON, as the apiserver would
// read it. Its errors name the field and the type wanted, never the value.
func decodeTyped(doc map[string]any, obj client.Object) error {
	b, err := json.Marshal(doc)
	if err != nil {
		return inputErrorf("the input cannot be read as JSON")
	}
	err = json.Unmarshal(b, obj)
	var typeErr *json.UnmarshalTypeError
	var b64Err base64.CorruptInputError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr):
		return inputErrorf("the input's field %s is not a %s", typeErr.Field, typeErr.Type)
	case errors.As(err, &b64Err):
		return inputErrorf("a value of the Secret's data is not base64 (put plain text in stringData)")
	}
	return inputErrorf("the input is not a valid %s", obj.GetObjectKind().GroupVersionKind().Kind)
}

// validNames refuses, as the apiserver would, a name, namespace or key
// that is not valid: the file comes from whoever wrote the change under
// review, and its names are printed to the reviewer's terminal. The error
// does not quote the name.
func validNames(obj client.Object) error {
	if len(validation.IsDNS1123Subdomain(obj.GetName())) > 0 {
		return inputErrorf("metadata.name is not a valid name (a DNS subdomain)")
	}
	if ns := obj.GetNamespace(); ns != "" && len(validation.IsDNS1123Label(ns)) > 0 {
		return inputErrorf("metadata.namespace is not a valid namespace (a DNS label)")
	}
	var keys []string
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		keys = append(slices.Collect(maps.Keys(o.Data)), slices.Collect(maps.Keys(o.BinaryData))...)
	case *corev1.Secret:
		keys = slices.Collect(maps.Keys(o.Data))
	}
	bad := 0
	for _, k := range keys {
		if len(validation.IsConfigMapKey(k)) > 0 {
			bad++
		}
	}
	if bad > 0 {
		return inputErrorf("%d of its keys are not valid keys (letters, digits, '-', '_' and '.')", bad)
	}
	return nil
}

// mergeStringData folds stringData into data, as the apiserver does on
// write: a key in both takes stringData's value.
func mergeStringData(s *corev1.Secret) {
	if len(s.StringData) == 0 {
		s.StringData = nil
		return
	}
	if s.Data == nil {
		s.Data = make(map[string][]byte, len(s.StringData))
	}
	for k, v := range s.StringData {
		s.Data[k] = []byte(v)
	}
	s.StringData = nil
}

var lineRE = regexp.MustCompile(`line \d+`)

// where says where in the input a parse error is, without quoting it: YAML
// errors name a line, JSON ones an offset.
func where(err error) string {
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return fmt.Sprintf(" (at byte %d)", syntax.Offset)
	}
	if l := lineRE.FindString(err.Error()); l != "" {
		return " (" + l + ")"
	}
	return ""
}

// short cuts a type field for an error message.
func short(s string) string {
	if len(s) > 63 {
		return s[:63] + "…"
	}
	return s
}
