//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
)

// TestWorkloadCreatedBeforeItsNamespaceWasServed: a Deployment created
// while its namespace is not served is left unstamped, and confighash
// caches its identity only (docs/security.md). Once the namespace is
// labelled, confighash reads the namespace's workloads again (its log
// says so, with how many it filled in), and the next change of the
// Secret the Deployment reads re-stamps it with the checksum of what it
// reads, as for a Deployment created in a served namespace.
func TestWorkloadCreatedBeforeItsNamespaceWasServed(t *testing.T) {
	logPath := logPathOf(env.Confighash)
	ns := env.NewNamespace(t, false)
	env.Create(t, secret(ns, "db", map[string]string{"password": "p1"}))
	spec := corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10",
		EnvFrom: []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "db"}}}}}}}
	d := deploymentOf(ns, "web", spec)
	d.Spec.Replicas = ptr.To[int32](0)
	env.Create(t, d)
	if got := env.StampOf(t, d); got != "" {
		t.Fatalf("stamped %q in a namespace not served", got)
	}
	// Let the informers see it while the namespace is not served.
	time.Sleep(2 * time.Second)

	var logStart int64
	if logPath != "" {
		logStart = fileSize(t, logPath)
	}
	nsObj := &corev1.Namespace{}
	nsObj.Name = ns
	env.Update(t, nsObj, func() { nsObj.Labels[contract.InjectionLabel] = contract.InjectionEnabled })
	if logPath != "" {
		// The fill, before the change: one made before it lands finds no
		// reader of the Secret (docs/security.md).
		filled := fmt.Sprintf(`"msg":"read the workloads of a newly served namespace","namespace":%q,"filled":1`, ns)
		err := wait.PollUntilContextTimeout(env.SpecContext(t), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
			return strings.Contains(readFrom(t, logPath, logStart), filled), nil
		})
		if err != nil {
			t.Fatalf("confighash did not read the workloads of %s once it was labelled (no %s in its log): %v", ns, filled, err)
		}
	} else {
		time.Sleep(5 * time.Second)
	}

	sec := &corev1.Secret{}
	if err := env.Client.Get(env.SpecContext(t), client.ObjectKey{Namespace: ns, Name: "db"}, sec); err != nil {
		t.Fatal(err)
	}
	env.Update(t, sec, func() { sec.Data["password"] = []byte("p2") })
	waitStamp(t, d, expectedChecksum(t, ns, &spec, nil), 30*time.Second)
}
