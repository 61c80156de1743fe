package waves

import (
	"slices"
	"testing"

	"github.com/confighash/confighash/internal/contract"
)

func TestSizes(t *testing.T) {
	for _, c := range []struct {
		n, max int
		want   []int
	}{
		{0, 8, nil},
		{1, 8, []int{1}},
		{2, 8, []int{1, 1}},
		{6, 8, []int{1, 2, 3}},
		{7, 8, []int{1, 2, 4}},
		{12, 8, []int{1, 2, 4, 5}},
		{40, 8, []int{1, 2, 4, 8, 8, 8, 8, 1}},
		{5, 1, []int{1, 1, 1, 1, 1}},
		{5, 0, []int{1, 1, 1, 1, 1}},
		{5, -3, []int{1, 1, 1, 1, 1}},
		{200, 64, []int{1, 2, 4, 8, 16, 32, 64, 64, 9}},
	} {
		if got := Sizes(c.n, c.max); !slices.Equal(got, c.want) {
			t.Errorf("Sizes(%d, %d) = %v, want %v", c.n, c.max, got, c.want)
		}
	}
}

func TestPlanOrder(t *testing.T) {
	ms := []Member{
		{KindName: "deployment", Namespace: "b", Name: "web"},
		{KindName: "deployment", Namespace: "a", Name: "web"},
		{KindName: "statefulset", Namespace: "a", Name: "db"},
		{KindName: "deployment", Namespace: "a", Name: "api"},
		{KindName: "deployment", Namespace: "z", Name: "staging", Order: -1},
		{KindName: "deployment", Namespace: "a", Name: "last", Order: 10},
	}
	got := Plan(ms, 8)
	want := [][]string{
		{"deployment/staging in z"},
		{"deployment/api in a", "deployment/web in a"},
		{"statefulset/db in a", "deployment/web in b", "deployment/last in a"},
	}
	if len(got) != len(want) {
		t.Fatalf("Plan: %d waves %v, want %d", len(got), got, len(want))
	}
	for i := range want {
		var names []string
		for _, m := range got[i] {
			names = append(names, m.String())
		}
		if !slices.Equal(names, want[i]) {
			t.Errorf("wave %d = %v, want %v", i, names, want[i])
		}
	}
	if ms[0].Name != "web" || ms[0].Namespace != "b" {
		t.Errorf("Plan sorted its argument in place: %v", ms)
	}
}

func TestOrderOf(t *testing.T) {
	for _, c := range []struct {
		v       *string
		want    int
		wantErr bool
	}{
		{nil, 0, false},
		{ptr("-5"), -5, false},
		{ptr(" 7 "), 7, false},
		{ptr("first"), 0, true},
		{ptr(""), 0, true},
	} {
		a := map[string]string{}
		if c.v != nil {
			a[contract.RolloutOrderAnnotation] = *c.v
		}
		got, err := OrderOf(a)
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("OrderOf(%v) = %d, %v; want %d, error %v", a, got, err, c.want, c.wantErr)
		}
	}
}

func ptr(s string) *string { return &s }
