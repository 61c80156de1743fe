//go:build e2e

package deploy

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/confighash/confighash/internal/contract"
)

// TestNamespacedRBACSufficesAtRunTime is TestRBACSufficesAtRunTime for the
// shipped namespaced component: the self-managed overlay with
// components/namespaced applied for real, and the binary run with its
// Deployment's args as its ServiceAccount. It must get ready and re-stamp a
// workload in team-a, leave one in a labelled namespace outside the list
// alone, and never be denied anything.
func TestNamespacedRBACSufficesAtRunTime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	r := renderNamed(t, namespacedRenders(t), "kustomize/self-managed+namespaced")
	bin, _ := confighashBinary(t)
	c := controlPlane(t)
	admin := adminClient(t, c)
	// The served namespaces exist before their Roles, as the component
	// says; team-c is labelled but not served.
	const outside = "team-c"
	for _, ns := range append([]string{outside}, r.Namespaces...) {
		ensureNamespace(ctx, t, admin, ns, map[string]string{contract.InjectionLabel: contract.InjectionEnabled})
	}
	proc, _ := runAsServiceAccount(ctx, t, c, admin, bin, install(ctx, t, r))

	// A workload outside the list, with a config change the hook would
	// act on if it watched there. Created first, so the re-stamp in
	// team-a below proves the hook had time to act on it.
	cm := createReader(ctx, t, admin, outside)
	cm.Data["n"] = "1"
	if _, err := admin.CoreV1().ConfigMaps(outside).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	restampWorkload(ctx, t, admin, proc, r.Namespaces[0])
	d, err := admin.AppsV1().Deployments(outside).Get(ctx, "app", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s := d.Spec.Template.Annotations[contract.ChecksumAnnotation]; s != "" {
		t.Errorf("%s (labelled, not served): stamped %q", outside, s)
	}
	stopNeverForbidden(t, proc)
}
