package webhook

import (
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
		"request skipped past nested values":                {`{"kind":"AdmissionReview","extra":[{"a":[1,{"b":2}]}],"request":{"userInfo":{"groups":["g"]},"namespace":"team-b"}}`, "team-b"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := reviewNamespace(strings.NewReader(tc.body)); got != tc.want {
				t.Errorf("reviewNamespace = %q, want %q", got, tc.want)
			}
		})
	}
}
