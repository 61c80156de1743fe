package argocd

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// podSpec is the pod spec every workload below carries: it reads cfg.
const podSpec = `
      containers:
      - name: app
        image: registry.k8s.io/pause:3.10
        envFrom: [{configMapRef: {name: cfg}}]`

// appsWorkload is an apps/v1 Deployment, StatefulSet or DaemonSet as Git
// holds it: the three differ only in kind.
func appsWorkload(kind string) string {
	return `
apiVersion: apps/v1
kind: ` + kind + `
metadata: {name: app}
spec:
  selector: {matchLabels: {app: app}}
  template:
    metadata: {labels: {app: app}}
    spec:` + podSpec
}

// workloads are the kinds confighash stamps on UPDATE, as Git holds them.
// The Rollout needs Argo Rollouts' CRDs and controller, which `cluster exec
// --rollouts` provides.
var workloads = []struct {
	resource string
	manifest string
}{
	{"deployments", appsWorkload("Deployment")},
	{"statefulsets", appsWorkload("StatefulSet")},
	{"daemonsets", appsWorkload("DaemonSet")},
	{"cronjobs", `
apiVersion: batch/v1
kind: CronJob
metadata: {name: app}
spec:
  schedule: "0 0 1 1 *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never` + strings.ReplaceAll(podSpec, "\n      ", "\n          ")},
	{"rollouts", `
apiVersion: argoproj.io/v1alpha1
kind: Rollout
metadata: {name: app}
spec:
  replicas: 1
  selector: {matchLabels: {app: app}}
  strategy: {canary: {}}
  template:
    metadata: {labels: {app: app}}
    spec:` + podSpec},
}

// TestEntriesCoverEveryKind checks the documented entries, in both their
// Application and argocd-cm forms, for every workload kind: with a stamp
// copied into Git (the case the entries exist for), the legacy diff must
// show the Deployment as modified without them and in sync with them, and
// server-side diff in sync either way. A wrong jq path for a kind fails here.
func TestEntriesCoverEveryKind(t *testing.T) {
	var figures results
	docs := fromDocs(t)
	settings := []setting{noSetting,
		{name: "Application entries", ignores: docs.application},
		{name: "argocd-cm entries", overrides: docs.system}}
	ns := the.injectedNamespace(t, "argocd-kinds")
	the.sync(t, fromGit(t, gitConfigMap, ns), true)
	for _, w := range workloads {
		desired := fromGit(t, w.manifest, ns)
		t.Run(desired.GetKind(), func(t *testing.T) {
			the.sync(t, desired, true)
			gvk := desired.GroupVersionKind()
			gvr := schema.GroupVersionResource{Group: gvk.Group, Version: gvk.Version, Resource: w.resource}
			live := the.settled(t, gvr, ns, "app", desired.GetKind()+" stamped and settled", func(u *unstructured.Unstructured) bool {
				return stampOf(u) != "" && observed(u)
			})
			copied := withStamp(t, desired, "v1:"+strings.Repeat("0", 64))
			cells := diffRow(t, desired.GetKind()+" with a copied stamp", copied, live, settings, func(m mode, ignoring bool) (bool, bool) {
				return !ignoring && !m.serverSide, true
			})
			figures.add(append([]string{desired.GetKind()}, cells...)...)
		})
	}
	figures.print(t, append([]string{"Git holds a copied stamp"}, diffColumns(settings)...)...)
}
