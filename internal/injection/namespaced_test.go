package injection

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// namespacedCases hold the policy of a confighash started with
// --namespaces=team-a,team-b: a label alone serves nothing outside the list.
var namespacedCases = map[string]policyCase{
	"listed and labelled":       {ns: "team-a", labels: enabled, serves: true, reason: "is labelled"},
	"listed, unlabelled":        {ns: "team-b", reason: "not labelled"},
	"labelled, not listed":      {ns: "shop", labels: enabled, reason: "--namespaces=team-a,team-b"},
	"unlabelled, not listed":    {ns: "shop", reason: "--namespaces=team-a,team-b"},
	"labelled kube-system":      {ns: "kube-system", labels: enabled, reason: "never served"},
	"labelled own namespace":    {ns: own, labels: enabled, reason: "never served"},
	"prefix of a listed name":   {ns: "team", labels: enabled, reason: "--namespaces"},
	"listed name with a suffix": {ns: "team-a-x", labels: enabled, reason: "--namespaces"},
}

func namespacedPolicy() Policy { return New(own, "team-a", "team-b") }

// TestCheckNamespacedReadsNothingOutside: a namespace outside the list is
// answered by name, with no read, since confighash may not even be allowed
// to read it.
func TestCheckNamespacedReadsNothingOutside(t *testing.T) {
	for name, tc := range namespacedCases {
		t.Run(name, func(t *testing.T) {
			ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tc.ns, Labels: tc.labels}}
			g := &countingGetter{Getter: fake.NewClientBuilder().WithObjects(ns).Build()}
			d, err := namespacedPolicy().Check(t.Context(), g, tc.ns)
			wantReads := 0
			if tc.ns == "team-a" || tc.ns == "team-b" {
				wantReads = 1
			}
			if err != nil || d.Serves != tc.serves || g.reads != wantReads {
				t.Errorf("Check(%s) = %+v, %v after %d reads; want serves=%v after %d", tc.ns, d, err, g.reads, tc.serves, wantReads)
			}
		})
	}
}

// TestNewCopiesTheList: the caller's slice is not the policy's.
func TestNewCopiesTheList(t *testing.T) {
	list := []string{"team-a"}
	p := New(own, list...)
	list[0] = "shop"
	if !p.Decide("team-a", enabled).Serves || p.Decide("shop", enabled).Serves {
		t.Error("the policy changed with the caller's slice")
	}
}
