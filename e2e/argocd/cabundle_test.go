package argocd

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var mwcGVR = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"}

// webhookConfigName is the MutatingWebhookConfiguration confighash injects
// its CA into.
const webhookConfigName = "confighash"

// gitWebhookConfig is the live configuration as Git holds it: the same
// webhooks, without the caBundle that confighash (or cert-manager's
// cainjector) fills in.
func gitWebhookConfig(t *testing.T, live *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	webhooks, _, err := unstructured.NestedSlice(live.Object, "webhooks")
	if err != nil || len(webhooks) == 0 {
		t.Fatalf("live %s has no webhooks (err %v)", webhookConfigName, err)
	}
	for _, w := range webhooks {
		unstructured.RemoveNestedField(w.(map[string]any), "clientConfig", "caBundle")
	}
	desired := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": live.GetAPIVersion(),
		"kind":       live.GetKind(),
		"metadata":   map[string]any{"name": live.GetName()},
		"webhooks":   webhooks,
	}}
	desired.SetLabels(live.GetLabels())
	return desired
}

func caBundles(t *testing.T, u *unstructured.Unstructured) []string {
	t.Helper()
	webhooks, _, _ := unstructured.NestedSlice(u.Object, "webhooks")
	var out []string
	for _, w := range webhooks {
		b, _, _ := unstructured.NestedString(w.(map[string]any), "clientConfig", "caBundle")
		out = append(out, b)
	}
	return out
}

// TestCABundleCausesNoDiff syncs confighash's MutatingWebhookConfiguration
// as Argo CD would from Git (without caBundle), checks the sync leaves the
// injected caBundle alone, and asks Argo CD's diff whether the configuration
// is OutOfSync. Server-side apply runs first: client-side apply leaves a
// last-applied-configuration behind that switches the legacy diff to its
// three-way form.
func TestCABundleCausesNoDiff(t *testing.T) {
	var figures results
	settings := []setting{noSetting, withSnippet(t)}
	injected := the.get(t, mwcGVR, "", webhookConfigName)
	want := caBundles(t, injected)
	for _, b := range want {
		if b == "" {
			t.Fatalf("confighash has not injected a caBundle into every webhook of %s; nothing would be tested", webhookConfigName)
		}
	}
	desired := gitWebhookConfig(t, injected)

	for _, serverSideSync := range []bool{true, false} {
		syncName := map[bool]string{false: "client-side apply", true: "server-side apply"}[serverSideSync]
		t.Run(syncName, func(t *testing.T) {
			the.sync(t, desired, serverSideSync)
			// confighash re-injects a removed caBundle within its check
			// interval, so look twice: right after the sync, and once more
			// after confighash had time to react to it.
			live := the.get(t, mwcGVR, "", webhookConfigName)
			assertBundles(t, "right after the sync", caBundles(t, live), want)
			rv := live.GetResourceVersion()
			time.Sleep(3 * time.Second)
			live = the.get(t, mwcGVR, "", webhookConfigName)
			if live.GetResourceVersion() != rv {
				t.Errorf("the configuration changed again after the sync (resourceVersion %s -> %s): something is fighting Argo CD", rv, live.GetResourceVersion())
			}

			cells := diffRow(t, syncName, desired, live, settings, never)
			figures.add(append([]string{syncName, legacyKind(live)}, cells...)...)
		})
	}
	// The webhook still works after the syncs: a new workload is stamped.
	ns := the.injectedNamespace(t, "argocd-webhook-after-sync")
	the.sync(t, fromGit(t, gitConfigMap, ns), true)
	the.sync(t, fromGit(t, gitDeployment, ns), true)
	eventually(t, "a stamp after the syncs", func(ctx context.Context) (bool, error) {
		u, err := the.dynamic.Resource(deploymentsGVR).Namespace(ns).Get(ctx, "web", metav1.GetOptions{})
		return err == nil && stampOf(u) != "", err
	})
	figures.print(t, append([]string{"sync", "legacy diff"}, diffColumns(settings)...)...)
}

func assertBundles(t *testing.T, when string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d webhooks, want %d", when, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: the sync changed the caBundle of webhook %d (Argo CD and confighash would fight over it)", when, i)
		}
	}
}
