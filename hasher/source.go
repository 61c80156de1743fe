package hasher

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Kind is the kind of object a Source names.
type Kind string

// The kinds of object whose content confighash tracks.
const (
	ConfigMap Kind = "ConfigMap"
	Secret    Kind = "Secret"
)

// Source names one ConfigMap or Secret in the workload's namespace.
type Source struct {
	Kind Kind
	Name string
}

// String gives "configmap/NAME" or "secret/NAME". It is also the syntax of
// the include and exclude annotations and the field-index key other packages
// use, so ParseSource(s.String()) round-trips for every valid Source.
func (s Source) String() string {
	return kindToken(s.Kind) + "/" + s.Name
}

// kindToken is the lowercase spelling of a kind used in Source strings.
func kindToken(k Kind) string {
	// Constant strings for the known kinds keep String allocation-light;
	// it is called for every index key and every log line.
	switch k {
	case ConfigMap:
		return "configmap"
	case Secret:
		return "secret"
	default:
		return strings.ToLower(string(k))
	}
}

// ParseSource parses "configmap/NAME" or "secret/NAME". The kind is matched
// case-insensitively and surrounding space is trimmed, because the input is
// usually typed by hand into an annotation. The name must be a valid DNS
// subdomain, as every ConfigMap and Secret name is.
func ParseSource(s string) (Source, error) {
	text := strings.TrimSpace(s)
	kindText, name, ok := strings.Cut(text, "/")
	if !ok {
		return Source{}, fmt.Errorf("invalid source %q: want \"configmap/NAME\" or \"secret/NAME\"", text)
	}

	var kind Kind
	switch {
	case strings.EqualFold(kindText, "configmap"):
		kind = ConfigMap
	case strings.EqualFold(kindText, "secret"):
		kind = Secret
	default:
		return Source{}, fmt.Errorf("invalid source %q: unknown kind %q, want \"configmap\" or \"secret\"", text, kindText)
	}

	if name == "" {
		return Source{}, fmt.Errorf("invalid source %q: missing name after %q", text, kindText+"/")
	}
	if problems := validation.IsDNS1123Subdomain(name); len(problems) > 0 {
		return Source{}, fmt.Errorf("invalid source %q: invalid name %q: %s", text, name, strings.Join(problems, "; "))
	}
	return Source{Kind: kind, Name: name}, nil
}

// compareSources orders sources by kind, then name: the order of References'
// result, of Result.Missing and of sources in the pre-image.
func compareSources(a, b Source) int {
	if c := strings.Compare(string(a.Kind), string(b.Kind)); c != 0 {
		return c
	}
	return strings.Compare(a.Name, b.Name)
}
