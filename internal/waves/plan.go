package waves

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/confighash/confighash/internal/contract"
)

// Member is one reader of a change.
type Member struct {
	// KindName is the workload kind's registry name (workload.Kind.Name).
	KindName  string
	Namespace string
	Name      string
	// Order is the reader's contract.RolloutOrderAnnotation.
	Order int
	// Later: its rollout window was closed, or a freeze held it, when the
	// change was planned. It goes after the readers that may go now, so
	// that it is not their canary and holds up none of their waves.
	Later bool
}

// String names m as KIND/NAME in NAMESPACE, e.g. "deployment/web in shop".
func (m Member) String() string {
	return fmt.Sprintf("%s/%s in %s", m.KindName, m.Name, m.Namespace)
}

// OrderOf reads contract.RolloutOrderAnnotation from a reader's
// annotations: 0 when unset, and 0 with an error when it is not an
// integer.
func OrderOf(annotations map[string]string) (int, error) {
	v, ok := annotations[contract.RolloutOrderAnnotation]
	if !ok {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil {
		return 0, fmt.Errorf("%s %q is not an integer: %w", contract.RolloutOrderAnnotation, v, err)
	}
	return n, nil
}

// Compare orders members as the waves take them: those that may go now
// before the Later ones, then by Order, namespace, kind and name.
func Compare(a, b Member) int {
	return cmp.Or(compareBool(a.Later, b.Later), cmp.Compare(a.Order, b.Order), strings.Compare(a.Namespace, b.Namespace),
		strings.Compare(a.KindName, b.KindName), strings.Compare(a.Name, b.Name))
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// Sizes returns the sizes of the waves of n readers with waves of at most
// max: 1, 2, 4, ... up to max, the last one what is left. max < 1 counts
// as 1.
func Sizes(n, max int) []int {
	if max < 1 {
		max = 1
	}
	var sizes []int
	for size := 1; n > 0; size = min(size*2, max) {
		size = min(size, max, n)
		sizes = append(sizes, size)
		n -= size
	}
	return sizes
}

// Plan sorts members and cuts them into waves of at most max.
func Plan(members []Member, max int) [][]Member {
	ms := slices.Clone(members)
	slices.SortFunc(ms, Compare)
	var waves [][]Member
	for _, size := range Sizes(len(ms), max) {
		waves = append(waves, ms[:size:size])
		ms = ms[size:]
	}
	return waves
}
