package injection

import (
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/internal/contract"
)

const own = "confighash-system"

var enabled = map[string]string{contract.InjectionLabel: contract.InjectionEnabled}

type policyCase struct {
	ns     string
	labels map[string]string
	serves bool
	reason string // a part of the reason
}

// policyCases is shared by the tests below, so that Decide, the selector
// and Check are held to the same table.
var policyCases = map[string]policyCase{
	"labelled":                      {ns: "shop", labels: enabled, serves: true, reason: "is labelled"},
	"unlabelled":                    {ns: "shop", reason: "not labelled"},
	"other label value":             {ns: "shop", labels: map[string]string{contract.InjectionLabel: "true"}, reason: "not labelled"},
	"label on another key":          {ns: "shop", labels: map[string]string{"confighash.dev/other": "enabled"}, reason: "not labelled"},
	"unlabelled kube-system":        {ns: "kube-system", reason: "never served"},
	"labelled kube-system":          {ns: "kube-system", labels: enabled, reason: "never served"},
	"labelled own namespace":        {ns: own, labels: enabled, reason: "never served"},
	"unlabelled own namespace":      {ns: own, reason: "never served"},
	"labelled kube-public":          {ns: "kube-public", labels: enabled, serves: true, reason: "is labelled"},
	"name like kube-system, served": {ns: "kube-system-x", labels: enabled, serves: true, reason: "is labelled"},
}

// policyTable is a policy and the table it is held to.
type policyTable struct {
	p     Policy
	cases map[string]policyCase
}

// policyTables are the policies Decide and the selector are held to:
// cluster-wide, and namespaced (see namespacedCases).
func policyTables() map[string]policyTable {
	return map[string]policyTable{
		"cluster-wide": {New(own), policyCases},
		"namespaced":   {namespacedPolicy(), namespacedCases},
	}
}

func TestDecide(t *testing.T) {
	for policy, pt := range policyTables() {
		for name, tc := range pt.cases {
			t.Run(policy+"/"+name, func(t *testing.T) {
				d := pt.p.Decide(tc.ns, tc.labels)
				if d.Serves != tc.serves || !strings.Contains(d.Reason, tc.reason) {
					t.Errorf("Decide(%s, %v) = %+v, want serves=%v and a reason with %q", tc.ns, tc.labels, d, tc.serves, tc.reason)
				}
			})
		}
	}
}

// TestSelectorAgreesWithDecide is what makes the webhook configuration and
// the handler one policy: the apiserver calls the webhook for exactly the
// namespaces the handler serves (namespaced: the listed, labelled ones).
func TestSelectorAgreesWithDecide(t *testing.T) {
	for policy, pt := range policyTables() {
		sel, err := metav1.LabelSelectorAsSelector(pt.p.NamespaceSelector())
		if err != nil {
			t.Fatal(err)
		}
		for name, tc := range pt.cases {
			t.Run(policy+"/"+name, func(t *testing.T) {
				// The apiserver labels every namespace with its name.
				set := labels.Set{NameLabel: tc.ns}
				for k, v := range tc.labels {
					set[k] = v
				}
				if got := sel.Matches(set); got != tc.serves {
					t.Errorf("selector %s matches %v: %v, Decide serves: %v", sel, set, got, tc.serves)
				}
			})
		}
	}
}

func TestCheck(t *testing.T) {
	p := New(own)
	for name, tc := range policyCases {
		t.Run(name, func(t *testing.T) {
			c := fake.NewClientBuilder().WithObjects(&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tc.ns, Labels: tc.labels}}).Build()
			d, err := p.Check(t.Context(), c, tc.ns)
			if err != nil || d.Serves != tc.serves {
				t.Errorf("Check = %+v, %v; want serves=%v", d, err, tc.serves)
			}
		})
	}
}

// countingGetter counts reads, and fails them with err when set.
type countingGetter struct {
	Getter
	reads int
	err   error
}

func (g *countingGetter) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	g.reads++
	if g.err != nil {
		return g.err
	}
	return g.Getter.Get(ctx, key, obj, opts...)
}

func TestCheckReadsOnlyWhatItMust(t *testing.T) {
	p := New(own)
	tests := map[string]struct {
		ns        string
		objects   []client.Object
		readErr   error
		wantReads int
		wantErr   bool
		wantWhy   string
	}{
		"kube-system is decided by name":   {ns: "kube-system", wantReads: 0, wantWhy: "never served"},
		"own namespace is decided by name": {ns: own, wantReads: 0, wantWhy: "never served"},
		"no namespace":                     {ns: "", wantReads: 0, wantWhy: "not namespaced"},
		"missing namespace":                {ns: "gone", wantReads: 1, wantWhy: "does not exist"},
		"unreadable namespace":             {ns: "shop", readErr: errors.New("boom"), wantReads: 1, wantErr: true, wantWhy: "cannot read"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			g := &countingGetter{Getter: fake.NewClientBuilder().WithObjects(tc.objects...).Build(), err: tc.readErr}
			d, err := p.Check(t.Context(), g, tc.ns)
			if (err != nil) != tc.wantErr || d.Serves || g.reads != tc.wantReads || !strings.Contains(d.Reason, tc.wantWhy) {
				t.Errorf("Check(%q) = %+v, %v after %d reads; want serves=false, error %v, %d reads, reason with %q",
					tc.ns, d, err, g.reads, tc.wantErr, tc.wantReads, tc.wantWhy)
			}
		})
	}
}

func TestCacheThenLive(t *testing.T) {
	labelled := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "new", Labels: enabled}}
	tests := map[string]struct {
		cache, live []client.Object
		serves      bool
		liveReads   int
	}{
		"in the cache":         {cache: []client.Object{labelled}, live: []client.Object{labelled}, serves: true},
		"not in the cache yet": {live: []client.Object{labelled}, serves: true, liveReads: 1},
		"nowhere":              {serves: false, liveReads: 1},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			live := &countingGetter{Getter: fake.NewClientBuilder().WithObjects(tc.live...).Build()}
			r := CacheThenLive{Cache: fake.NewClientBuilder().WithObjects(tc.cache...).Build(), Live: live}
			d, err := New(own).Check(t.Context(), r, "new")
			if err != nil || d.Serves != tc.serves || live.reads != tc.liveReads {
				t.Errorf("Check = %+v, %v after %d live reads; want serves=%v after %d", d, err, live.reads, tc.serves, tc.liveReads)
			}
		})
	}
}
