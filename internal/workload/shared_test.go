package workload

import (
	"reflect"
	"runtime"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestSlimmedWorkloadsShareEqualParts: slimmed copies whose selectors,
// kept conditions, or references are equal point to one copy of them,
// held as the input's; unequal ones each have their own.
func TestSlimmedWorkloadsShareEqualParts(t *testing.T) {
	k := kindNamed(t, "Deployment")
	slim := func(d *appsv1.Deployment) *appsv1.Deployment { return k.SlimObject(d).(*appsv1.Deployment) }
	in := readerOf("web", "db", nil)
	a, b := slim(in), slim(readerOf("web", "other", nil))
	if a.Spec.Selector != b.Spec.Selector {
		t.Error("two slimmed copies of equal selectors hold one each")
	}
	if &a.Status.Conditions[0] != &b.Status.Conditions[0] {
		t.Error("two slimmed copies of equal conditions hold a list each")
	}
	if !reflect.DeepEqual(a.Spec.Selector, in.Spec.Selector) {
		t.Errorf("selector %+v, want %+v", a.Spec.Selector, in.Spec.Selector)
	}
	if want := []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue, Reason: "MinimumReplicasAvailable"}}; !reflect.DeepEqual(a.Status.Conditions, want) {
		t.Errorf("conditions %+v, want %+v", a.Status.Conditions, want)
	}

	if &a.Spec.Template.Spec.Volumes[0] == &b.Spec.Template.Spec.Volumes[0] {
		t.Error("copies reading different Secrets share their reads")
	}
	same := slim(readerOf("api", "db", nil))
	if &a.Spec.Template.Spec.Volumes[0] != &same.Spec.Template.Spec.Volumes[0] {
		t.Error("two copies reading the same Secret key hold their reads each")
	}
	if ra, rs := ReadsOf(k, a), ReadsOf(k, same); !reflect.DeepEqual(ra.Refs, rs.Refs) || ra.Refs[0].Name != "db" {
		t.Errorf("shared reads give %+v and %+v", ra.Refs, rs.Refs)
	}

	other := readerOf("api", "db", nil)
	other.Status.Conditions[0].Status = corev1.ConditionFalse
	c := slim(other)
	if c.Spec.Selector == a.Spec.Selector || c.Spec.Selector.MatchLabels["app"] != "api" {
		t.Errorf("selector of app api %+v is app web's", c.Spec.Selector)
	}
	if &c.Status.Conditions[0] == &a.Status.Conditions[0] || c.Status.Conditions[0].Status != corev1.ConditionFalse {
		t.Errorf("conditions %+v are the other copy's", c.Status.Conditions)
	}
}

// TestSelectorKeyTellsSelectorsApart: selectors that differ anywhere
// (labels against expressions, nil against empty values, the split
// between a key and its value) have different keys.
func TestSelectorKeyTellsSelectorsApart(t *testing.T) {
	req := func(key string, values []string) metav1.LabelSelectorRequirement {
		return metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOpIn, Values: values}
	}
	sels := []*metav1.LabelSelector{
		{},
		{MatchLabels: map[string]string{}},
		{MatchLabels: map[string]string{"a": "bc"}},
		{MatchLabels: map[string]string{"ab": "c"}},
		{MatchLabels: map[string]string{"a": "b", "c": "d"}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{req("a", nil)}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{req("a", []string{})}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{req("a", []string{"b"})}},
		{MatchExpressions: []metav1.LabelSelectorRequirement{req("a", []string{"b"}), req("c", nil)}},
		{MatchLabels: map[string]string{"a": "b"}, MatchExpressions: []metav1.LabelSelectorRequirement{req("c", nil)}},
	}
	seen := map[string]int{}
	for i, s := range sels {
		key := selectorKey(s)
		if j, ok := seen[key]; ok {
			t.Errorf("selectors %d %+v and %d %+v have one key %q", j, sels[j], i, s, key)
		}
		seen[key] = i
	}
}

// TestSharedValuesLetGo: a shared value is held no longer than a copy
// points to it, so the table grows with the cached copies, not with every
// part ever seen; while one does, an equal key finds it.
func TestSharedValuesLetGo(t *testing.T) {
	var table sharedValues[metav1.LabelSelector]
	mk := func(i int) *metav1.LabelSelector {
		return table.share(keyOf("app", strconv.Itoa(i)), func() *metav1.LabelSelector {
			return &metav1.LabelSelector{MatchLabels: map[string]string{"app": strconv.Itoa(i)}}
		})
	}
	kept := make([]*metav1.LabelSelector, 100)
	for i := range kept {
		kept[i] = mk(i)
	}
	if got := table.len(); got != len(kept) {
		t.Fatalf("%d values held for %d distinct ones", got, len(kept))
	}
	if again := mk(7); again != kept[7] {
		t.Error("an equal key made a second value")
	}
	runtime.KeepAlive(kept)
	clear(kept)
	deadline := time.Now().Add(10 * time.Second)
	for table.len() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d values still held after their copies went", table.len())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}
