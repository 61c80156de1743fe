package webhook

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestReviewNamespace: the namespace a review is queued under is read from
// the start of its body, as the apiserver writes it; a body that puts it
// after the objects, or past the peek, or not as a string, is queued under
// "" (no namespace's turn), and no body makes it read further.
func TestReviewNamespace(t *testing.T) {
	big, err := json.Marshal(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{
		Name: "d", Annotations: map[string]string{"pad": strings.Repeat("x", 2*namespacePeekBytes)}}})
	if err != nil {
		t.Fatal(err)
	}
	apiserver, err := json.Marshal(&admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID: "u", Name: "d", Namespace: "team-a", Operation: admissionv1.Create,
			Kind:   metav1.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"},
			Object: runtime.RawExtension{Raw: big},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		body string
		want string
	}{
		"as the apiserver writes it, before a large object": {string(apiserver), "team-a"},
		"no namespace (cluster-scoped)":                     {`{"request":{"uid":"u","object":{}}}`, ""},
		"after the object":                                  {`{"request":{"object":{"metadata":{"namespace":"x"}},"namespace":"late"}}`, ""},
		"after the old object":                              {`{"request":{"oldObject":{},"namespace":"late"}}`, ""},
		"past the peek":                                     {`{"pad":"` + strings.Repeat("x", namespacePeekBytes) + `","request":{"namespace":"far"}}`, ""},
		"not a string":                                      {`{"request":{"namespace":{"name":"x"}}}`, ""},
		"not an object":                                     {`["request"]`, ""},
		"not JSON":                                          {`request: {namespace: x}`, ""},
		"cut short":                                         {`{"request":{"namespace":`, ""},
		"pretty-printed":                                    {"{\n  \"request\" : {\n    \"uid\": \"u\",\n    \"namespace\" : \"team-c\"\n  }\n}", "team-c"},
		"an escaped name":                                   {`{"request":{"namespace":"te\u0061m"}}`, ""},
		"not a namespace's name":                            {`{"request":{"namespace":"Team A"}}`, ""},
		"not a DNS label":                                   {`{"request":{"namespace":"-team"}}`, ""},
		"longer than a name":                                {`{"request":{"namespace":"` + strings.Repeat("a", 64) + `"}}`, ""},
		"strings holding braces and quotes":                 {`{"x":"}{\"","request":{"name":"a,b}","namespace":"team-d"}}`, "team-d"},
		"request skipped past nested values":                {`{"kind":"AdmissionReview","extra":[{"a":[1,{"b":2}]}],"request":{"userInfo":{"groups":["g"]},"namespace":"team-b"}}`, "team-b"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := reviewNamespace([][]byte{[]byte(tc.body)}); got != tc.want {
				t.Errorf("reviewNamespace = %q, want %q", got, tc.want)
			}
			// As readBody hands it over: in chunks, split anywhere.
			b := []byte(tc.body)
			for _, at := range []int{1, len(b) / 2, len(b) - 1} {
				if at <= 0 || at >= len(b) {
					continue
				}
				if got := reviewNamespace([][]byte{b[:at], b[at:]}); got != tc.want {
					t.Errorf("in two chunks split at %d: reviewNamespace = %q, want %q", at, got, tc.want)
				}
			}
		})
	}
}

// FuzzReviewNamespace: no body makes the scan fail, read past the peek, or
// name a namespace a decoder would not find where the apiserver puts it.
func FuzzReviewNamespace(f *testing.F) {
	for _, seed := range []string{`{"request":{"namespace":"a"}}`, `{"request":{"object":{},"namespace":"a"}}`, `{"a":[{"b":"}"}],"request":{"namespace":"b"}}`, `{"request":{"namespace":`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ns := reviewNamespace([][]byte{body})
		if ns == "" {
			return
		}
		var review struct {
			Request struct {
				Namespace string `json:"namespace"`
			} `json:"request"`
		}
		if json.Unmarshal(body, &review) == nil && review.Request.Namespace != ns && bytes.Count(body, []byte(`"namespace"`)) == 1 {
			t.Errorf("scanned %q, decoded %q", ns, review.Request.Namespace)
		}
	})
}
