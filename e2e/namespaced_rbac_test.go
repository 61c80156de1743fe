//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/cmd/confighash/app"
	"github.com/confighash/confighash/e2e/framework"
)

// scopedGrants turns the code's own table of requests (app.Permissions)
// into RBAC: a Role in confighash's namespace and in each served
// namespace, and a ClusterRole for what is cluster-scoped. e2e/deploy holds
// the shipped manifests to the same table, so a token with exactly these
// grants has what the namespaced manifests give.
func scopedGrants(ps []app.Permission) (cluster []rbacv1.PolicyRule, local map[string][]rbacv1.PolicyRule) {
	local = map[string][]rbacv1.PolicyRule{}
	for _, p := range ps {
		rule := rbacv1.PolicyRule{APIGroups: []string{p.Group}, Resources: []string{p.Resource}, Verbs: p.Verbs}
		if p.Name != "" && p.Name != app.AnyName {
			rule.ResourceNames = []string{p.Name}
		}
		switch {
		case p.OwnNamespace:
			local[framework.Namespace] = append(local[framework.Namespace], rule)
		case len(p.Namespaces) > 0:
			for _, ns := range p.Namespaces {
				local[ns] = append(local[ns], rule)
			}
		default:
			cluster = append(cluster, rule)
		}
	}
	return cluster, local
}

// scopedKubeconfig creates a ServiceAccount with the grants of ps, bound
// where they apply, and writes a kubeconfig with a token for it from the
// TokenRequest API. Everything is deleted when the spec ends.
func scopedKubeconfig(t *testing.T, ps []app.Permission) string {
	t.Helper()
	ctx := env.SpecContext(t)
	name := fmt.Sprintf("confighash-scoped-%d", rand.Uint32())
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: framework.Namespace, Name: name}}
	subjects := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: sa.Namespace, Name: sa.Name}}
	cluster, local := scopedGrants(ps)
	objs := []client.Object{sa,
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: cluster},
		&rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subjects,
			RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name}},
	}
	for ns, rules := range local {
		objs = append(objs,
			&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: rules},
			&rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Subjects: subjects,
				RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}})
	}
	for _, o := range objs {
		env.Create(t, o)
		t.Cleanup(func() { _ = env.Client.Delete(context.Background(), o) })
	}

	cs, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return framework.ServiceAccountKubeconfig(ctx, t, cs, env.Config.Host, env.Config.CAData, sa)
}
