package deploy

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/confighash/confighash/cmd/confighash/app"
	"github.com/confighash/confighash/internal/workload"
)

// request is one API request confighash makes, for the RBAC check.
type request struct {
	group, resource, verb string
	namespace             string // "*" for any namespace (or cluster-scoped), else the one it is sent in
	name                  string // "" where the request names no object (list, watch, create)
	why                   string
	role                  string // app.PinnerRole for requests granted through it, else ""
}

func (q request) String() string {
	return fmt.Sprintf("%s %s.%s ns=%q name=%q (%s)", q.verb, q.resource, q.group, q.namespace, q.name, q.why)
}

// requiredRequests lists what confighash does against the API: the code's
// own table (app.Permissions), for the command line the Deployment passes.
// Requests that name objects chosen at run time name "some-object".
func requiredRequests(t *testing.T, r *rendered) []request {
	t.Helper()
	ps := permissionsOf(t, r)
	var reqs []request
	for _, p := range ps {
		nss := []string{"*"}
		switch {
		case p.Role == app.PinnerRole:
			nss = r.PinNamespaces // the namespaces that bind it
		case p.OwnNamespace:
			nss = []string{Namespace}
		case len(p.Namespaces) > 0:
			nss = p.Namespaces // namespaced mode
		}
		name := p.Name
		if name == app.AnyName {
			name = "some-object"
		}
		for _, ns := range nss {
			for _, v := range p.Verbs {
				reqs = append(reqs, request{group: p.Group, resource: p.Resource, verb: v, namespace: ns, name: name, why: p.Why, role: p.Role})
			}
		}
	}
	return reqs
}

// argsOf is the Deployment's command line as the pod runs it, with its
// namespace filled in.
func argsOf(r *rendered) []string {
	var args []string
	for _, a := range r.Container.Args {
		args = append(args, strings.ReplaceAll(a, "$(POD_NAMESPACE)", Namespace))
	}
	return args
}

// kindsOf is the registry of kinds the Deployment's command line serves:
// the built-in ones and those its --workload-kind flags add.
func kindsOf(t *testing.T, r *rendered) workload.Registry {
	t.Helper()
	kinds, err := app.KindsForArgs(argsOf(r))
	if err != nil {
		t.Fatalf("%s: %v", r.Name, err)
	}
	return kinds
}

// permissionsOf is app.Permissions for the Deployment's command line, with
// the pod's namespace filled in.
func permissionsOf(t *testing.T, r *rendered) []app.Permission {
	t.Helper()
	ps, err := app.PermissionsForArgs(argsOf(r))
	if err != nil {
		t.Fatalf("%s: %v", r.Name, err)
	}
	return ps
}

// grants are the rules that apply to the ServiceAccount, by where they apply.
type grants struct {
	cluster []rbacv1.PolicyRule            // in every namespace and cluster-wide
	local   map[string][]rbacv1.PolicyRule // by the namespace they apply in
	// pinner are the rules of app.PinnerRole, by the namespace whose
	// RoleBinding binds it: the only grants of the pinner's requests.
	pinner map[string][]rbacv1.PolicyRule
}

// pinnerScope prefixes the scopes of the pinner's RoleBindings.
const pinnerScope = app.PinnerRole + " in "

// scopes lists the rules by where they apply: "ClusterRole", "Role in NS",
// or pinnerScope and NS.
func (g grants) scopes() map[string][]rbacv1.PolicyRule {
	m := map[string][]rbacv1.PolicyRule{"ClusterRole": g.cluster}
	for ns, rules := range g.local {
		m["Role in "+ns] = rules
	}
	for ns, rules := range g.pinner {
		m[pinnerScope+ns] = rules
	}
	return m
}

// scopeNamespace is the namespace of a scope of scopes, "" for ClusterRole.
func scopeNamespace(scope string) string {
	if ns, ok := strings.CutPrefix(scope, pinnerScope); ok {
		return ns
	}
	ns, _ := strings.CutPrefix(scope, "Role in ")
	if ns == scope {
		return ""
	}
	return ns
}

// scopeRole is the Permission.Role a scope of scopes grants.
func scopeRole(scope string) string {
	if strings.HasPrefix(scope, pinnerScope) {
		return app.PinnerRole
	}
	return ""
}

func grantsOf(t *testing.T, r *rendered) grants {
	t.Helper()
	isSA := func(subjects []rbacv1.Subject) bool {
		for _, s := range subjects {
			if s.Kind == rbacv1.ServiceAccountKind && s.Name == r.SA.Name && s.Namespace == r.SA.Namespace {
				return true
			}
		}
		return false
	}
	g := grants{local: map[string][]rbacv1.PolicyRule{}, pinner: map[string][]rbacv1.PolicyRule{}}
	for _, b := range r.CRoleBinds {
		if !isSA(b.Subjects) {
			continue
		}
		if b.RoleRef.Kind != "ClusterRole" || b.RoleRef.APIGroup != rbacv1.GroupName {
			t.Errorf("ClusterRoleBinding %s binds %s", b.Name, b.RoleRef.Kind)
		}
		if b.RoleRef.Name == app.PinnerRole {
			t.Errorf("ClusterRoleBinding %s binds %s cluster-wide: it is bound per namespace", b.Name, app.PinnerRole)
		}
		g.cluster = append(g.cluster, clusterRoleRules(t, r, b.RoleRef.Name)...)
	}
	for _, b := range r.RoleBinds {
		if !isSA(b.Subjects) {
			continue
		}
		switch b.RoleRef.Kind {
		case "Role":
			found := false
			for _, role := range r.Roles {
				if role.Name == b.RoleRef.Name && role.Namespace == b.Namespace {
					g.local[b.Namespace] = append(g.local[b.Namespace], role.Rules...)
					found = true
				}
			}
			if !found {
				t.Errorf("RoleBinding %s binds Role %s, which is not rendered", b.Name, b.RoleRef.Name)
			}
		case "ClusterRole":
			if b.RoleRef.Name == app.PinnerRole {
				g.pinner[b.Namespace] = append(g.pinner[b.Namespace], clusterRoleRules(t, r, b.RoleRef.Name)...)
				continue
			}
			g.local[b.Namespace] = append(g.local[b.Namespace], clusterRoleRules(t, r, b.RoleRef.Name)...)
		}
	}
	return g
}

func clusterRoleRules(t *testing.T, r *rendered, name string) []rbacv1.PolicyRule {
	for _, cr := range r.CRoles {
		if cr.Name == name {
			return cr.Rules
		}
	}
	t.Errorf("ClusterRole %s is bound but not rendered", name)
	return nil
}

func matches(rule rbacv1.PolicyRule, q request) bool {
	has := func(list []string, v string) bool { return slices.Contains(list, v) || slices.Contains(list, "*") }
	if !has(rule.APIGroups, q.group) || !has(rule.Resources, q.resource) || !has(rule.Verbs, q.verb) {
		return false
	}
	// A rule with resourceNames only matches requests that name an object.
	return len(rule.ResourceNames) == 0 || (q.name != "" && slices.Contains(rule.ResourceNames, q.name))
}

// allow reports whether q is granted where the code's table says it is: a
// pinner request only by the pinner's RoleBinding in its namespace, any
// other by confighash's own grants.
func (g grants) allow(q request) bool {
	rules := append(slices.Clone(g.cluster), g.local[q.namespace]...)
	if q.role == app.PinnerRole {
		rules = g.pinner[q.namespace]
	}
	return slices.ContainsFunc(rules, func(rule rbacv1.PolicyRule) bool { return matches(rule, q) })
}

// TestRBACCoversTheCode checks that the ServiceAccount may do everything
// confighash does, and no more than the narrow grants the manifests
// promise: no wildcards, no writes beyond the patches the hook makes,
// Secret writes only to confighash's own Secrets.
func TestRBACCoversTheCode(t *testing.T) {
	for _, r := range decodedRenders(t) {
		t.Run(r.Name, func(t *testing.T) {
			g := grantsOf(t, r)
			mutable := map[string]bool{}
			for _, k := range kindsOf(t, r).Mutable() {
				mutable[k.Resource] = true
			}
			for _, q := range requiredRequests(t, r) {
				if !g.allow(q) {
					t.Errorf("not allowed: %s", q)
				}
			}

			writes := []string{"create", "update", "patch", "delete", "deletecollection", "escalate", "bind", "impersonate"}
			for scope, rules := range g.scopes() {
				for _, rule := range rules {
					for _, list := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs} {
						if slices.Contains(list, "*") {
							t.Errorf("%s rule %v uses a wildcard", scope, rule)
						}
					}
					if len(rule.NonResourceURLs) > 0 {
						t.Errorf("%s rule %v grants non-resource URLs", scope, rule)
					}
					for _, res := range rule.Resources {
						for _, v := range rule.Verbs {
							if !slices.Contains(writes, v) {
								continue
							}
							if ok, why := writeAllowed(scopeNamespace(scope), scopeRole(scope), res, v, rule.ResourceNames, r.Mode.Flag, mutable); !ok {
								t.Errorf("%s grants %s on %s %v: %s", scope, v, res, rule.ResourceNames, why)
							}
						}
					}
				}
			}
		})
	}
}

// writeAllowed is the list of writes the manifests may grant, in namespace
// ns ("" for a ClusterRole), through role (app.PinnerRole, or "" for
// confighash's own grants). mutable holds the resources of the kinds the
// hook re-stamps, as the Deployment's flags configure them.
func writeAllowed(ns, role, resource, verb string, names []string, certMode string, mutable map[string]bool) (bool, string) {
	if role == app.PinnerRole {
		// Snapshots, which the ValidatingAdmissionPolicy confighash-pinner
		// bounds; RBAC cannot name them.
		return (resource == "configmaps" || resource == "secrets") && (verb == "create" || verb == "patch" || verb == "delete"),
			"the pinner's role writes only snapshots: ConfigMaps and Secrets, created, patched and deleted"
	}
	switch {
	case verb == "delete" || verb == "deletecollection" || verb == "escalate" || verb == "bind" || verb == "impersonate":
		return false, "confighash never does this"
	case mutable[resource]:
		return verb == "patch", "the hook only patches workloads"
	case resource == "events":
		return verb == "create" || verb == "patch", "events are created and patched"
	case resource == "tokenreviews" || resource == "subjectaccessreviews":
		return verb == "create" && ns == "", "reviews are cluster-scoped questions to the apiserver, never stored"
	case resource == "leases":
		return ns == Namespace, "the lease lives in confighash's namespace"
	case resource == "secrets":
		if ns != Namespace {
			return false, "Secret writes must stay in confighash's namespace"
		}
		if verb == "create" {
			return true, ""
		}
		if len(names) == 0 {
			return false, "Secret updates must be limited by resourceNames"
		}
		if certMode != "self" && slices.Contains(names, "confighash-webhook-cert") {
			return false, "with cert-manager confighash keeps no certificate Secret"
		}
		return true, ""
	case resource == "configmaps":
		// The settings status and preview read, applied by name; and the
		// ConfigMap publishing the self-managed CA for scrapers.
		if ns == Namespace && slices.Equal(names, []string{"confighash-settings"}) {
			return verb == "create" || verb == "patch", "applied by name"
		}
		if ns != Namespace || certMode != "self" {
			return false, "ConfigMap writes are the CA bundle's, in confighash's namespace, with --cert-mode=self, and the settings'"
		}
		return verb == "create" || (verb == "update" && slices.Equal(names, []string{"confighash-ca-bundle"})), "created, then updated by name"
	case resource == "mutatingwebhookconfigurations":
		if certMode != "self" {
			return false, "with cert-manager confighash does not inject the caBundle"
		}
		return len(names) > 0 && verb != "create", "only its own configuration, by name"
	}
	return false, "not a write confighash makes"
}

// TestRBACGrantsNothingTheCodeDoesNotUse is the other direction of
// TestRBACCoversTheCode: every verb a rule grants the ServiceAccount must
// be needed by an entry of the code's table (app.Permissions) for the
// Deployment's command line, with no wider scope than it needs:
//   - a ClusterRole grant must be needed outside confighash's namespace;
//   - each resourceName must be an object the code names;
//   - a rule without resourceNames must be needed for requests that
//     cannot be restricted by name (list, watch, create, or objects chosen
//     at run time).
func TestRBACGrantsNothingTheCodeDoesNotUse(t *testing.T) {
	for _, r := range decodedRenders(t) {
		t.Run(r.Name, func(t *testing.T) {
			ps := permissionsOf(t, r)
			g := grantsOf(t, r)
			for scope, rules := range g.scopes() {
				for _, rule := range rules {
					for _, group := range rule.APIGroups {
						for _, res := range rule.Resources {
							for _, verb := range rule.Verbs {
								if why := excess(ps, scopeNamespace(scope), scopeRole(scope), group, res, verb, rule.ResourceNames); why != "" {
									t.Errorf("%s grants %s on %s.%s %v, which the code does not need: %s", scope, verb, res, group, rule.ResourceNames, why)
								}
							}
						}
					}
				}
			}
		})
	}
}

// excess says why a grant in namespace ns ("" for a ClusterRole) through
// role (app.PinnerRole, or "" for confighash's own grants) is more than ps
// needs, or "" when it is needed.
func excess(ps []app.Permission, ns, role, group, resource, verb string, names []string) string {
	var needed []app.Permission
	for _, p := range ps {
		if p.Role == role && p.Group == group && p.Resource == resource && slices.Contains(p.Verbs, verb) {
			needed = append(needed, p)
		}
	}
	if len(needed) == 0 {
		return "no code path sends it"
	}
	anywhere := func(p app.Permission) bool { return !p.OwnNamespace && len(p.Namespaces) == 0 }
	if ns == "" && !slices.ContainsFunc(needed, anywhere) {
		return "needed only in some namespaces: grant it in Roles there"
	}
	if ns != "" && !slices.ContainsFunc(needed, func(p app.Permission) bool {
		return anywhere(p) || (p.OwnNamespace && ns == Namespace) || slices.Contains(p.Namespaces, ns)
	}) {
		return "not needed in namespace " + ns
	}
	if len(names) == 0 {
		if !slices.ContainsFunc(needed, func(p app.Permission) bool { return p.Name == "" || p.Name == app.AnyName }) {
			return "the code names its objects: restrict it by resourceNames"
		}
		return ""
	}
	for _, n := range names {
		if !slices.ContainsFunc(needed, func(p app.Permission) bool { return p.Name == n || p.Name == app.AnyName }) {
			return fmt.Sprintf("the code never sends it for %q", n)
		}
	}
	return ""
}
