//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

func TestWebhookStampsEveryKind(t *testing.T) {
	ns := env.NewNamespace(t, true)
	env.Create(t, configMap(ns, "cfg", map[string]string{"a": "1"}))
	env.Create(t, secret(ns, "sec", map[string]string{"password": "hunter2"}))
	spec := podSpec("cfg", "sec")
	jobSpec := *spec.DeepCopy()
	jobSpec.RestartPolicy = corev1.RestartPolicyNever
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "e2e"}}

	objects := map[string]client.Object{
		"Deployment": deploymentOf(ns, "d", spec),
		"StatefulSet": &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "s"},
			Spec: appsv1.StatefulSetSpec{Selector: selector, Template: template(spec)}},
		"DaemonSet": &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ds"},
			Spec: appsv1.DaemonSetSpec{Selector: selector, Template: template(spec)}},
		"CronJob": &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cj"},
			Spec: batchv1.CronJobSpec{Schedule: "0 0 1 1 *", JobTemplate: batchv1.JobTemplateSpec{
				Spec: batchv1.JobSpec{Template: template(jobSpec)}}}},
		"Job": &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "j"},
			Spec: batchv1.JobSpec{Template: template(jobSpec)}},
		"Pod": &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}, Spec: spec},
	}
	want := expectedChecksum(t, ns, &spec, nil)
	if want == "" {
		t.Fatal("expected a checksum for a spec that reads config")
	}
	for kind, obj := range objects {
		t.Run(kind, func(t *testing.T) {
			env.Create(t, obj)
			got := env.StampOf(t, obj)
			// Admission plugins ahead of ours add the kube-api-access volume
			// to pods; the stamp must not depend on it.
			tmpl, _ := workload.Kinds().PodTemplate(obj)
			if stored := expectedChecksum(t, ns, tmpl.Spec, nil); stored != want {
				t.Errorf("checksum of the stored spec %q differs from the submitted spec's %q", stored, want)
			}
			if got != want {
				t.Errorf("stamp = %q, want %q", got, want)
			}
		})
	}
}

// TestWebhookLeavesAlone: a Deployment in an unlabelled namespace, or
// one that opts out, is not stamped.
func TestWebhookLeavesAlone(t *testing.T) {
	for name, tc := range map[string]struct {
		labelled    bool
		annotations map[string]string
	}{
		"unlabelled namespace": {},
		"opted out":            {labelled: true, annotations: map[string]string{contract.InjectionAnnotation: contract.InjectionDisabled}},
	} {
		t.Run(name, func(t *testing.T) {
			ns := env.NewNamespace(t, tc.labelled)
			env.Create(t, configMap(ns, "cfg", map[string]string{"a": "1"}))
			d := deploymentOf(ns, "d", podSpec("cfg", "sec"))
			d.Annotations = tc.annotations
			env.Create(t, d)
			if got := env.StampOf(t, d); got != "" {
				t.Errorf("got stamp %q, want none", got)
			}
		})
	}
}

func TestWebhookServerSideDryRun(t *testing.T) {
	ns := env.NewNamespace(t, true)
	env.Create(t, configMap(ns, "cfg", map[string]string{"a": "1"}))
	env.Create(t, secret(ns, "sec", map[string]string{"password": "x"}))
	spec := podSpec("cfg", "sec")
	d := dryRunUntilCached(t, ns, spec)
	err := env.Client.Get(env.SpecContext(t), client.ObjectKeyFromObject(d), &appsv1.Deployment{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("dry-run left an object behind: %v", err)
	}
}

// manifest is applied in one go: the ConfigMap and Secret reach the
// apiserver moments before the Deployment, as in any `kubectl apply -f dir/`.
const manifest = `apiVersion: v1
kind: ConfigMap
metadata: {name: cfg}
data: {a: "1"}
---
apiVersion: v1
kind: Secret
metadata: {name: sec}
stringData: {password: hunter2}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 1
  selector: {matchLabels: {app: e2e}}
  template:
    metadata: {labels: {app: e2e}}
    spec:
      containers:
      - name: app
        image: registry.k8s.io/pause:3.10
        envFrom: [{configMapRef: {name: cfg}}]
        env: [{name: PASSWORD, valueFrom: {secretKeyRef: {name: sec, key: password}}}]
`

// TestNoOpWritesDoNotRoll makes the writes GitOps tools and people make with
// an unchanged pod template, in order (each leaves state the next builds on,
// e.g. last-applied-configuration holding a copied stamp): the stamp and the
// ReplicaSet must stay the same.
func TestNoOpWritesDoNotRoll(t *testing.T) {
	ns := env.NewNamespace(t, true)
	env.Kubectl(t, manifest, "apply", "-n", ns, "-f", "-")
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}
	stamp := env.StampOf(t, d)
	if want := expectedChecksum(t, ns, &d.Spec.Template.Spec, nil); stamp != want {
		t.Fatalf("stamp after first apply = %q, want %q (a source applied just before was not seen?)", stamp, want)
	}
	first := expectReplicaSets(t, ns, "web", 1)

	// A manifest holding a stamp copied from some other live object: only
	// confighash may change a stamp without a template change.
	copied := strings.Replace(manifest, "metadata: {labels: {app: e2e}}",
		fmt.Sprintf("metadata: {labels: {app: e2e}, annotations: {%q: %q}}", contract.ChecksumAnnotation, "v1:"+strings.Repeat("0", 64)), 1)
	if copied == manifest {
		t.Fatal("could not add a stamp to the manifest")
	}
	type step struct {
		manifest string
		args     []string
	}
	steps := map[string]step{
		"kubectl apply again":                    {manifest, []string{"apply", "-n", ns, "-f", "-"}},
		"kubectl apply --server-side":            {manifest, []string{"apply", "--server-side", "--force-conflicts", "-n", ns, "-f", "-"}},
		"kubectl replace (no annotation)":        {manifest, []string{"replace", "-n", ns, "-f", "-"}},
		"kubectl apply with a copied stamp":      {copied, []string{"apply", "-n", ns, "-f", "-"}},
		"kubectl replace with a copied stamp":    {copied, []string{"replace", "-n", ns, "-f", "-"}},
		"kubectl apply (stamp dropped from Git)": {manifest, []string{"apply", "-n", ns, "-f", "-"}},
	}
	for _, name := range []string{"kubectl apply again", "kubectl apply --server-side", "kubectl replace (no annotation)",
		"kubectl apply with a copied stamp", "kubectl replace with a copied stamp", "kubectl apply (stamp dropped from Git)"} {
		t.Run(name, func(t *testing.T) {
			env.Kubectl(t, steps[name].manifest, steps[name].args...)
			if got := env.StampOf(t, d); got != stamp {
				t.Errorf("stamp changed from %q to %q", stamp, got)
			}
			if got := expectReplicaSets(t, ns, "web", 1); got[0] != first[0] {
				t.Errorf("replicaset %s replaced %s", got[0], first[0])
			}
		})
	}
}

func TestMalformedRequestGets4xx(t *testing.T) {
	url := env.Confighash.WebhookURL()
	if url == "" {
		t.Skip("webhook endpoint is not reachable from the test process on this cluster")
	}
	hc := webhookHTTPClient(t)
	bodies := map[string]string{
		"not json":            "{{{",
		"no request":          `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`,
		"wrong review object": `{"apiVersion":"v1","kind":"ConfigMap"}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			resp, err := hc.Post(url, "application/json", bytes.NewBufferString(body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode < 400 || resp.StatusCode >= 500 {
				t.Errorf("status = %d, want 4xx", resp.StatusCode)
			}
		})
	}
}

// TestCreatesSucceedWhileStopped stops confighash, so it runs last in this
// file and starts confighash again.
func TestCreatesSucceedWhileStopped(t *testing.T) {
	ns := env.NewNamespace(t, true)
	stopConfighash(t)
	d := deploymentOf(ns, "d", podSpec("cfg", "sec"))
	d.Spec.Replicas = ptr.To[int32](0)
	env.Create(t, d) // failurePolicy: Ignore
	if got := env.StampOf(t, d); got != "" {
		t.Errorf("stamp %q while confighash was down", got)
	}
}
