package preview

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/hasher"
)

func TestParseYAMLAndJSON(t *testing.T) {
	for name, text := range map[string]string{
		"yaml": "# a comment\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n  namespace: shop\ndata:\n  a: one\n---\n",
		"json": `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app","namespace":"shop"},"data":{"a":"one"}}`,
	} {
		t.Run(name, func(t *testing.T) {
			in, err := Parse(strings.NewReader(text))
			if err != nil {
				t.Fatal(err)
			}
			cm, ok := in.Object.(*corev1.ConfigMap)
			if in.Source != (hasher.Source{Kind: hasher.ConfigMap, Name: "app"}) || in.Namespace != "shop" || !ok || cm.Data["a"] != "one" {
				t.Errorf("Parse = %+v", in)
			}
		})
	}
}

func TestParseSecretStringData(t *testing.T) {
	in, err := Parse(strings.NewReader(`apiVersion: v1
kind: Secret
metadata: {name: db}
data:
  user: YWRtaW4=
  password: b2xk
stringData:
  password: new
  token: t
`))
	if err != nil {
		t.Fatal(err)
	}
	s := in.Object.(*corev1.Secret)
	want := map[string]string{"user": "admin", "password": "new", "token": "t"}
	if len(s.Data) != len(want) || s.StringData != nil {
		t.Fatalf("data %v, stringData %v; want %v merged into data", s.Data, s.StringData, want)
	}
	for k, v := range want {
		if string(s.Data[k]) != v {
			t.Errorf("data[%s] = %q, want %q", k, s.Data[k], v)
		}
	}
	if in.Namespace != "" {
		t.Errorf("namespace %q, want none", in.Namespace)
	}
}

// TestParseRefuses: each bad input is an InputError whose text says what
// is wrong and quotes nothing of the input's values.
func TestParseRefuses(t *testing.T) {
	const secretValue = "hunter2-in-the-input"
	for name, c := range map[string]struct{ text, want string }{
		"empty":          {"", "no object"},
		"two objects":    {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n", "2 objects"},
		"json stream":    {`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"}} {"apiVersion":"v1","kind":"Secret","metadata":{"name":"b"}}`, "2 objects"},
		"list":           {"apiVersion: v1\nkind: List\nitems: []\n", "list"},
		"deployment":     {"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\n", `kind "Deployment"`},
		"no name":        {"apiVersion: v1\nkind: ConfigMap\ndata: {a: " + secretValue + "}\n", "metadata.name"},
		"bad yaml":       {"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: " + secretValue + "\n b: [\n", "not valid YAML or JSON"},
		"bad json":       {`{"apiVersion":"v1","kind":"ConfigMap","data":{"a":"` + secretValue + `"`, "not valid YAML or JSON"},
		"wrong type":     {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {a: [" + secretValue + "]}\n", "is not a string"},
		"bad base64":     {"apiVersion: v1\nkind: Secret\nmetadata: {name: a}\ndata: {a: " + secretValue + "}\n", "not base64"},
		"bad key":        {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  \"k\\e[2K\\r" + secretValue + "\": x\n", "1 of its keys are not valid"},
		"bad binary key": {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\nbinaryData: {\"a/" + secretValue + "\": eA==}\n", "1 of its keys are not valid"},
		"bad secret key": {"apiVersion: v1\nkind: Secret\nmetadata: {name: a}\nstringData: {\"a " + secretValue + "\": x}\n", "1 of its keys are not valid"},
		"bad name":       {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"A_" + secretValue + "\"}\n", "metadata.name is not a valid name"},
		"bad namespace":  {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: \"ns." + secretValue + "\"}\n", "metadata.namespace is not a valid namespace"},
		"too large":      {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {a: " + strings.Repeat("x", MaxInputBytes) + "}\n", "over 4 MiB"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(c.text))
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("Parse: %v, want an InputError", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q lacks %q", err, c.want)
			}
			if strings.Contains(err.Error(), secretValue) || strings.Contains(err.Error(), "xxxx") {
				t.Errorf("error %q quotes the input", err)
			}
		})
	}
}
