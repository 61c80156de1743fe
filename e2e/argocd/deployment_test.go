package argocd

import (
	"fmt"
	"testing"
	"time"

	"github.com/argoproj/argo-cd/v3/common"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/internal/contract"
)

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// gitConfigMap and gitDeployment are the application as Git holds it: no
// stamp anywhere.
const gitConfigMap = `
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
data:
  a: "1"
`

const gitDeployment = `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: web
        image: registry.k8s.io/pause:3.10
        env:
        - name: A
          valueFrom:
            configMapKeyRef:
              name: cfg
              key: a
`

// fromGit decodes a manifest and adds what Argo CD adds before it syncs or
// diffs: the namespace and the tracking annotation.
func fromGit(t *testing.T, manifest, namespace string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatalf("decoding manifest: %v", err)
	}
	if namespace != "" {
		u.SetNamespace(namespace)
	}
	gvk := u.GroupVersionKind()
	u.SetAnnotations(map[string]string{
		common.AnnotationKeyAppInstance: fmt.Sprintf("confighash-demo:%s/%s:%s/%s", gvk.Group, gvk.Kind, namespace, u.GetName()),
	})
	return u
}

// TestDeploymentStampCausesNoDiff syncs an application with Argo CD's
// applier, lets confighash stamp it and then roll it on a config change, and
// asks Argo CD's diff at both points whether the Deployment is OutOfSync:
// for each sync style, each diff mode, with and without the snippet.
func TestDeploymentStampCausesNoDiff(t *testing.T) {
	var figures results
	settings := []setting{noSetting, withSnippet(t)}
	for _, serverSideSync := range []bool{false, true} {
		syncName := map[bool]string{false: "client-side apply", true: "server-side apply"}[serverSideSync]
		t.Run(syncName, func(t *testing.T) {
			ns := the.injectedNamespace(t, map[bool]string{false: "argocd-csa", true: "argocd-ssa"}[serverSideSync])
			desired := fromGit(t, gitDeployment, ns)
			the.sync(t, fromGit(t, gitConfigMap, ns), serverSideSync)
			the.sync(t, desired, serverSideSync)

			stamped := waitRevision(t, ns, "1")
			check := func(state string, live *unstructured.Unstructured, cases []gitCase) {
				if stampOf(live) == "" {
					t.Fatalf("%s: the live Deployment carries no stamp; nothing would be tested", state)
				}
				for _, c := range cases {
					cells := diffRow(t, state+", Git "+c.name, c.desired, live, settings, c.want)
					figures.add(append([]string{syncName, state, c.name, legacyKind(live)}, cells...)...)
				}
			}
			check("stamped", stamped, []gitCase{{name: "as synced", desired: desired, want: never}})

			// A config change: confighash re-stamps, the Deployment rolls.
			if _, err := the.kube.CoreV1().ConfigMaps(ns).Patch(t.Context(), "cfg", types.MergePatchType,
				[]byte(`{"data":{"a":"2"}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			rolled := waitRevision(t, ns, "2")
			if stampOf(stamped) == stampOf(rolled) {
				t.Fatalf("the stamp did not change on a config change (%s)", stampOf(rolled))
			}
			// The re-stamp's record is on the live object, so the rows
			// below hold it to no diff as well.
			if rolled.GetAnnotations()[contract.RolloutAnnotation] == "" {
				t.Fatalf("the re-stamped Deployment carries no %s; the waves are off", contract.RolloutAnnotation)
			}
			check("rolled", rolled, []gitCase{
				{name: "as synced", desired: desired, want: never},
				// The control: a real change must show, or the rows above
				// prove nothing.
				{name: "image changed", desired: withImage(t, desired, "registry.k8s.io/pause:3.9"), want: always},
				// Someone copied a live object, stamp included, into Git.
				{name: "holds the old stamp", desired: withStamp(t, desired, stampOf(stamped)), want: hiddenByWebhookOrSnippet},
			})

			// Argo CD syncs that Git (auto-sync would, while it shows a
			// diff): the webhook keeps the stored stamp, so nothing rolls.
			the.sync(t, withStamp(t, desired, stampOf(stamped)), serverSideSync)
			time.Sleep(3 * time.Second) // give the hook and the Deployment controller time to act, if they wrongly would
			// (The generation may move: a client-side apply rewrites the
			// last-applied annotation, and Deployment annotations bump it.)
			after := waitRevision(t, ns, "2")
			before, _, _ := unstructured.NestedMap(rolled.Object, "spec", "template")
			now, _, _ := unstructured.NestedMap(after.Object, "spec", "template")
			if !equality.Semantic.DeepEqual(before, now) {
				t.Errorf("syncing a manifest with an old stamp changed the pod template: stamp %s -> %s", stampOf(rolled), stampOf(after))
			}

			// Git drops the copied stamp again. A client-side apply left it in
			// last-applied-configuration, which the legacy three-way diff reads.
			check("synced the old stamp", after, []gitCase{{name: "as synced", desired: desired, want: serverSideOnly}})
			the.sync(t, desired, serverSideSync)
			check("re-synced", waitRevision(t, ns, "2"), []gitCase{{name: "as synced", desired: desired, want: never}})
		})
	}
	figures.print(t, append([]string{"sync", "live state", "Git", "legacy diff"}, diffColumns(settings)...)...)
}

// gitCase is one desired state Argo CD could compare the live Deployment
// with, and whether it should count as modified.
type gitCase struct {
	name    string
	desired *unstructured.Unstructured
	want    expectation
}

// hiddenByWebhookOrSnippet: server-side diff predicts the stored stamp (the
// webhook puts it back on the dry-run), and the snippet hides the field from
// any diff. The legacy diff without the snippet is measured, not asserted.
func hiddenByWebhookOrSnippet(m mode, ignoring bool) (bool, bool) {
	return false, ignoring || m.serverSide
}

func withImage(t *testing.T, u *unstructured.Unstructured, image string) *unstructured.Unstructured {
	t.Helper()
	out := u.DeepCopy()
	containers, _, _ := unstructured.NestedSlice(out.Object, "spec", "template", "spec", "containers")
	containers[0].(map[string]any)["image"] = image
	if err := unstructured.SetNestedSlice(out.Object, containers, "spec", "template", "spec", "containers"); err != nil {
		t.Fatal(err)
	}
	return out
}

func withStamp(t *testing.T, u *unstructured.Unstructured, stamp string) *unstructured.Unstructured {
	t.Helper()
	out := u.DeepCopy()
	if err := unstructured.SetNestedField(out.Object, stamp, append(templatePath(u), "metadata", "annotations", contract.ChecksumAnnotation)...); err != nil {
		t.Fatal(err)
	}
	return out
}

// templatePath is where a workload kind keeps its pod template, for
// withStamp to write to (framework.TemplateStamp reads the same path).
func templatePath(u *unstructured.Unstructured) []string {
	if u.GetKind() == "CronJob" {
		return []string{"spec", "jobTemplate", "spec", "template"}
	}
	return []string{"spec", "template"}
}

// serverSideOnly asserts no diff for server-side diff and measures the
// legacy one.
func serverSideOnly(m mode, _ bool) (bool, bool) { return false, m.serverSide }

// waitRevision waits for the Deployment controller to reach a revision and
// for the Deployment to settle, and returns it then.
func waitRevision(t *testing.T, ns, revision string) *unstructured.Unstructured {
	t.Helper()
	return the.settled(t, deploymentsGVR, ns, "web", "web at revision "+revision, func(u *unstructured.Unstructured) bool {
		return u.GetAnnotations()["deployment.kubernetes.io/revision"] == revision && observed(u)
	})
}

// stampOf is u's stamp, "" when it has none or no pod template (the waits
// poll through that).
func stampOf(u *unstructured.Unstructured) string {
	s, _ := framework.TemplateStamp(u)
	return s
}
