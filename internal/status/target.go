package status

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/confighash/confighash/internal/workload"
)

// Target names the workloads to report on.
type Target struct {
	// KindName is the kind's workload.Kind.Name (Deployment, …, or
	// Widget.example.com for a custom kind); empty means every kind the hook
	// re-stamps.
	KindName string
	// Name is one workload's name; empty means all of them.
	Name string
}

// ParseTarget parses "KIND/NAME" or a bare "NAME". KIND is matched as
// kubectl does: singular, plural or short name, optionally qualified by the
// API group ("deployments.apps"), in any case. Only the kinds the hook
// re-stamps are accepted, since a Job's or Pod's stamp can never go stale.
//
// kinds are the kinds confighash serves, with those its --workload-kind
// adds, so that those can be named too.
func ParseTarget(s string, kinds workload.Registry) (Target, error) {
	kindText, name, hasKind := strings.Cut(s, "/")
	if !hasKind {
		kindText, name = "", s
	}
	if name == "" {
		return Target{}, fmt.Errorf("invalid workload %q: want KIND/NAME or NAME", s)
	}
	if problems := validation.IsDNS1123Subdomain(name); len(problems) > 0 {
		return Target{}, fmt.Errorf("invalid workload name %q: %s", name, strings.Join(problems, "; "))
	}
	if !hasKind {
		return Target{Name: name}, nil
	}
	kind, ok := kindByName(kinds, kindText)
	if !ok {
		return Target{}, fmt.Errorf("unknown kind %q: want one of %s", kindText, strings.Join(kindNames(kinds), ", "))
	}
	return Target{KindName: kind.Name(), Name: name}, nil
}

// kinds lists the kinds of reg that t covers.
func (t Target) kinds(reg workload.Registry) []workload.Kind {
	all := reg.Mutable()
	if t.KindName == "" {
		return all
	}
	for _, k := range all {
		if k.Name() == t.KindName {
			return []workload.Kind{k}
		}
	}
	return nil
}

// String gives "kind/name", "name" or "".
func (t Target) String() string {
	if t.KindName == "" {
		return t.Name
	}
	return strings.ToLower(t.KindName) + "/" + t.Name
}

func kindByName(reg workload.Registry, text string) (workload.Kind, bool) {
	text = strings.ToLower(text)
	for _, k := range reg.Mutable() {
		kind, group := strings.ToLower(k.GVK.Kind), k.GVK.Group
		names := []string{kind, k.Resource}
		if group != "" {
			names = append(names, kind+"."+group, k.Resource+"."+group)
		}
		names = append(names, k.ShortNames...)
		for _, n := range names {
			if n == text {
				return k, true
			}
		}
	}
	return workload.Kind{}, false
}
