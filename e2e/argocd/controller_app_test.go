package argocd

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	synccommon "github.com/argoproj/argo-cd/gitops-engine/v3/pkg/sync/common"
	"github.com/argoproj/argo-cd/v3/pkg/apis/application/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/e2e/images"
)

// appPath is the application's directory in its Git repository.
const appPath = "app"

// settle is how long a Deployment must stay unchanged, rolled out, before
// a spec counts its rollouts: longer than the hook's 1 s coalescing window
// plus its re-stamp and the Deployment controller's reaction, so that
// "nothing more rolled" is observed rather than assumed.
const settle = 6 * time.Second

// version is what one commit holds: the ConfigMap's value and, when stage
// is set, an extra argument and variable of the Deployment (a change of
// its pod template in the same commit).
type version struct {
	greeting, stage string
	// stamp, when set, is a copied confighash.dev/checksum in the pod
	// template, as a manifest copied from the cluster holds it.
	stamp string
	// window, when set, is the Deployment's confighash.dev/coalesce-window.
	window string
}

// files renders the application as Git holds it.
func (v version) files() map[string]string {
	args := []string{"-env", "GREETING", "-file", "/config/greeting"}
	env := `
        - name: GREETING
          valueFrom:
            configMapKeyRef:
              name: web-config
              key: greeting`
	if v.stage != "" {
		args = append(args, "-env", "STAGE")
		env += `
        - name: STAGE
          value: ` + strconv.Quote(v.stage)
	}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = strconv.Quote(a)
	}
	annotations := ""
	if v.stamp != "" {
		annotations = "\n      annotations:\n        confighash.dev/checksum: " + strconv.Quote(v.stamp)
	}
	metadata := ""
	if v.window != "" {
		metadata = "\n  annotations:\n    confighash.dev/coalesce-window: " + strconv.Quote(v.window)
	}
	return map[string]string{
		appPath + "/configmap.yaml": fmt.Sprintf(`apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  greeting: %s
`, strconv.Quote(v.greeting)),
		appPath + "/deployment.yaml": fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: web%s
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web%s
    spec:
      terminationGracePeriodSeconds: 2
      containers:
      - name: app
        image: %s
        imagePullPolicy: IfNotPresent
        args: [%s]
        env:%s
        volumeMounts:
        - name: config
          mountPath: /config
      volumes:
      - name: config
        configMap:
          name: web-config
`, metadata, annotations, images.SampleApp().Ref, strings.Join(quoted, ", "), env),
	}
}

// prints is what the sample app's pods print for v.
func (v version) prints() []string {
	lines := []string{"env:GREETING=" + v.greeting, "file:/config/greeting=" + v.greeting}
	if v.stage != "" {
		lines = append(lines, "env:STAGE="+v.stage)
	}
	slices.Sort(lines)
	return lines
}

// gitopsApp is one Application of Argo CD, its Git repository and the
// namespace it deploys to, labelled for injection.
type gitopsApp struct {
	argo *argoCD
	repo *gitRepo
	name string
	ns   string
	// syncs numbers the explicit sync operations, to tell them apart.
	syncs int
}

// newGitopsApp commits first to a new repository and creates an
// Application with automated sync, prune and self-heal, the sync options
// given and the ignoreDifferences entries of docs/argocd.md, then waits for
// its first sync to be Synced, Healthy and rolled out. Each prepare runs on
// the new namespace before the Application exists (a spec that pins labels
// it and binds confighash-pinner there).
func newGitopsApp(t *testing.T, argo *argoCD, name string, syncOptions []string, first version, prepare ...func(t *testing.T, ns string)) (*gitopsApp, string) {
	t.Helper()
	text, err := readDocs()
	if err != nil {
		t.Fatal(err)
	}
	documented, err := documentedApplication(text)
	if err != nil {
		t.Fatal(err)
	}
	g := &gitopsApp{argo: argo, repo: newGitRepo(t), name: name, ns: the.injectedNamespace(t, "argocd-ctl-"+name)}
	for _, p := range prepare {
		p(t, g.ns)
	}
	sha := g.repo.commit(t, "first", first.files())
	app := &v1alpha1.Application{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: controlplane.ArgoCDNamespace},
		Spec: v1alpha1.ApplicationSpec{
			Project:     "default",
			Source:      &v1alpha1.ApplicationSource{RepoURL: g.repo.URL(), Path: appPath, TargetRevision: "HEAD"},
			Destination: v1alpha1.ApplicationDestination{Server: argo.run.Server, Namespace: g.ns},
			SyncPolicy: &v1alpha1.SyncPolicy{
				Automated:   &v1alpha1.SyncPolicyAutomated{Prune: ptr.To(true), SelfHeal: ptr.To(true)},
				SyncOptions: syncOptions,
			},
			IgnoreDifferences: documented.Spec.IgnoreDifferences,
		},
	}
	if _, err := argo.apps.ArgoprojV1alpha1().Applications(app.Namespace).Create(t.Context(), app, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating Application %s: %v", name, err)
	}
	t.Cleanup(func() {
		_ = argo.apps.ArgoprojV1alpha1().Applications(app.Namespace).Delete(context.WithoutCancel(t.Context()), name, metav1.DeleteOptions{})
	})
	g.waitSynced(t, sha)
	g.settled(t)
	return g, sha
}

func (g *gitopsApp) get(ctx context.Context) (*v1alpha1.Application, error) {
	return g.argo.apps.ArgoprojV1alpha1().Applications(controlplane.ArgoCDNamespace).Get(ctx, g.name, metav1.GetOptions{})
}

func (g *gitopsApp) patch(t *testing.T, patch any) {
	t.Helper()
	b, err := json.Marshal(patch)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.argo.apps.ArgoprojV1alpha1().Applications(controlplane.ArgoCDNamespace).Patch(t.Context(), g.name, types.MergePatchType, b, metav1.PatchOptions{}); err != nil {
		t.Fatalf("patching Application %s: %v", g.name, err)
	}
}

// refresh asks the controller to compare with Git again, as the UI's
// Refresh button does, and waits until it has (it removes the annotation).
func (g *gitopsApp) refresh(t *testing.T) {
	t.Helper()
	g.patch(t, map[string]any{"metadata": map[string]any{"annotations": map[string]string{v1alpha1.AnnotationKeyRefresh: string(v1alpha1.RefreshTypeNormal)}}})
	poll(t, "the refresh of "+g.name, 2*time.Minute, func(ctx context.Context) (bool, error) {
		app, err := g.get(ctx)
		if err != nil {
			return false, err
		}
		_, pending := app.Annotations[v1alpha1.AnnotationKeyRefresh]
		return !pending, nil
	})
}

// commit commits v, refreshes and waits for the automated sync to it.
func (g *gitopsApp) commit(t *testing.T, message string, v version) string {
	t.Helper()
	sha := g.repo.commit(t, message, v.files())
	g.refresh(t)
	g.waitSynced(t, sha)
	return sha
}

// syncNow starts a sync operation by hand, as `argocd app sync` does, and
// waits until it succeeded.
func (g *gitopsApp) syncNow(t *testing.T, sha string, syncOptions []string) {
	t.Helper()
	g.syncs++
	id := g.name + "-" + strconv.Itoa(g.syncs)
	g.patch(t, map[string]any{"operation": map[string]any{
		"initiatedBy": map[string]any{"username": "e2e"},
		"info":        []map[string]string{{"name": "e2e", "value": id}},
		"sync":        map[string]any{"revision": sha, "syncOptions": syncOptions},
	}})
	poll(t, "sync operation "+id, 2*time.Minute, func(ctx context.Context) (bool, error) {
		app, err := g.get(ctx)
		if err != nil {
			return false, err
		}
		st := app.Status.OperationState
		if app.Operation != nil || st == nil || !slices.ContainsFunc(st.Operation.Info, func(i *v1alpha1.Info) bool { return i.Value == id }) {
			return false, nil
		}
		if st.Phase.Completed() && !st.Phase.Successful() {
			return false, fmt.Errorf("sync operation %s: %s: %s", id, st.Phase, st.Message)
		}
		return st.Phase == synccommon.OperationSucceeded, nil
	})
	g.waitSynced(t, sha)
}

// waitSynced waits until the Application is Synced to sha and Healthy, its
// last operation (if any) succeeded.
func (g *gitopsApp) waitSynced(t *testing.T, sha string) {
	t.Helper()
	var last string
	poll(t, g.name+" Synced to "+sha[:8]+" and Healthy", 3*time.Minute, func(ctx context.Context) (bool, error) {
		app, err := g.get(ctx)
		if err != nil {
			return false, err
		}
		st := app.Status
		last = fmt.Sprintf("sync %s at %.8s, health %s", st.Sync.Status, st.Sync.Revision, st.Health.Status)
		if op := st.OperationState; op != nil {
			last += fmt.Sprintf(", operation %s: %s", op.Phase, op.Message)
			if !op.Phase.Completed() || !op.Phase.Successful() {
				return false, nil
			}
		}
		return st.Sync.Status == v1alpha1.SyncStatusCodeSynced && st.Sync.Revision == sha && st.Health.Status == "Healthy", nil
	}, func() string { return last })
}

// deployment is the application's live Deployment.
func (g *gitopsApp) deployment(ctx context.Context) (*appsv1.Deployment, error) {
	return the.kube.AppsV1().Deployments(g.ns).Get(ctx, "web", metav1.GetOptions{})
}

// rollouts is what a spec counts: the Deployment's revision (each rollout,
// onto a new ReplicaSet or back onto an old one, raises it by one) and the
// ReplicaSets it owns.
type rollouts struct {
	revision    int
	replicaSets []string
}

func (r rollouts) String() string {
	return fmt.Sprintf("revision %d, ReplicaSets %v", r.revision, r.replicaSets)
}

// since is the number of rollouts from before to r.
func (r rollouts) since(before rollouts) int { return r.revision - before.revision }

// settled waits until the Deployment has rolled out completely and neither
// its revision, its ReplicaSets nor its stamp has moved for settle, and
// returns its rollouts.
func (g *gitopsApp) settled(t *testing.T) rollouts {
	t.Helper()
	var cur rollouts
	var key string
	var since time.Time
	poll(t, "the Deployment of "+g.name+" to settle", 3*time.Minute, func(ctx context.Context) (bool, error) {
		d, err := g.deployment(ctx)
		if err != nil {
			return false, err
		}
		want := ptr.Deref(d.Spec.Replicas, 1)
		s := d.Status
		if s.ObservedGeneration != d.Generation || s.UpdatedReplicas != want || s.ReadyReplicas != want || s.AvailableReplicas != want || s.Replicas != want {
			since = time.Time{}
			return false, nil
		}
		rev, err := strconv.Atoi(d.Annotations["deployment.kubernetes.io/revision"])
		if err != nil {
			return false, nil //nolint:nilerr // not yet written
		}
		var names []string
		for _, rs := range g.argo.env.ReplicaSets(t, g.ns, "web") {
			names = append(names, rs.Name)
		}
		slices.Sort(names)
		r := rollouts{revision: rev, replicaSets: names}
		k := r.String() + " " + d.Spec.Template.Annotations["confighash.dev/checksum"]
		if k != key || since.IsZero() {
			cur, key, since = r, k, time.Now()
			return false, nil
		}
		return time.Since(since) >= settle, nil
	})
	return cur
}

// expectPrints checks that the pods of the Deployment's current
// ReplicaSet print v's values, read from the environment and the mounted
// file alike, and returns that ReplicaSet.
func (g *gitopsApp) expectPrints(t *testing.T, v version) string {
	t.Helper()
	rs := g.argo.env.CurrentReplicaSet(t, g.ns, "web")
	want := v.prints()
	var got []string
	poll(t, "the pods of "+rs+" to print "+strings.Join(want, " "), 2*time.Minute, func(ctx context.Context) (bool, error) {
		pods, err := the.kube.CoreV1().Pods(g.ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			c := metav1.GetControllerOf(&p)
			if c == nil || c.Name != rs || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
				continue
			}
			b, err := the.kube.CoreV1().Pods(g.ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
			if err != nil {
				return false, nil //nolint:nilerr // the container may be starting
			}
			got = strings.Split(strings.TrimSpace(string(b)), "\n")
			slices.Sort(got)
			return slices.Equal(got, want), nil
		}
		return false, nil
	}, func() string { return fmt.Sprintf("printed %q", got) })
	t.Logf("pods of %s print %q", rs, got)
	return rs
}

// watchSync samples the Application every 200 ms until the returned stop
// is called, which returns every state it saw that was not Synced or
// warned of orphaned resources, and the samples taken. Argo CD's cache sees
// each write at once, so a stamp shown as OutOfSync for even a moment would
// show here.
func (g *gitopsApp) watchSync(t *testing.T) (stop func() (notSynced []string, samples int)) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var mu sync.Mutex
	var seen []string
	n := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			if app, err := g.get(ctx); err == nil {
				mu.Lock()
				n++
				if s := app.Status.Sync.Status; s != v1alpha1.SyncStatusCodeSynced {
					state := fmt.Sprintf("%s at %.8s", s, app.Status.Sync.Revision)
					for _, r := range app.Status.Resources {
						if r.Status != v1alpha1.SyncStatusCodeSynced {
							state += fmt.Sprintf("; %s %s %s", r.Kind, r.Name, r.Status)
						}
					}
					if !slices.Contains(seen, state) {
						seen = append(seen, state)
					}
				}
				for _, c := range app.Status.Conditions {
					if c.Type == v1alpha1.ApplicationConditionOrphanedResourceWarning && !slices.Contains(seen, c.Message) {
						seen = append(seen, c.Message)
					}
				}
				mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() ([]string, int) {
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return seen, n
	}
}

// poll checks cond every 200 ms until it holds, failing the test after
// timeout with what describe (if any) says of the last look.
func poll(t *testing.T, what string, timeout time.Duration, cond func(context.Context) (bool, error), describe ...func() string) {
	t.Helper()
	if err := wait.PollUntilContextTimeout(t.Context(), 200*time.Millisecond, timeout, true, cond); err != nil {
		msg := ""
		for _, d := range describe {
			msg += "; " + d()
		}
		t.Fatalf("waiting for %s: %v%s", what, err, msg)
	}
}
