//go:build e2e

package incluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/cmd/confighash/app"
	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/hashkey"
	"github.com/confighash/confighash/internal/pinner"
	"github.com/confighash/confighash/internal/pinning"
	"github.com/confighash/confighash/internal/status"
)

// failureExpectUnpinned checks that pod p was admitted unpinned for reason
// and printed value, read from the live ConfigMap shared.
func failureExpectUnpinned(t *testing.T, p corev1.Pod, reason pinner.Reason, value string) {
	t.Helper()
	if got, want := p.Annotations[pinning.PodAnnotation], "false: "+string(reason); got != want {
		t.Errorf("pod %s: %s=%q, want %q", p.Name, pinning.PodAnnotation, got, want)
	}
	failureExpectLive(t, p, value)
}

// failureExpectLive checks that pod p reads the live ConfigMap shared (no
// snapshot) and printed value from its environment, mounted file and
// subPath file.
func failureExpectLive(t *testing.T, p corev1.Pod, value string) {
	t.Helper()
	env := p.Spec.Containers[0].Env[0].ValueFrom.ConfigMapKeyRef.Name
	if vol := p.Spec.Volumes[0].ConfigMap.Name; vol != "shared" || env != "shared" {
		t.Fatalf("pod %s reads volume %s and env %s, want shared", p.Name, vol, env)
	}
	expectPrinted(t, p, value)
}

// failureSnapshots lists the snapshots (labelled so) in ns.
func failureSnapshots(t *testing.T, ns string) []metav1.PartialObjectMetadata {
	t.Helper()
	l := &metav1.PartialObjectMetadataList{}
	l.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	if err := env.Client.List(env.SpecContext(t), l, client.InNamespace(ns), client.HasLabels{pinning.SnapshotLabel}); err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func failureNames(objs []metav1.PartialObjectMetadata) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.Name)
	}
	return out
}

// failureExpectEvent waits for confighash's PodUnpinned Event on d naming
// reason.
func failureExpectEvent(t *testing.T, d *appsv1.Deployment, reason pinner.Reason) {
	t.Helper()
	var seen []string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		l := &corev1.EventList{}
		if err := env.Client.List(ctx, l, client.InNamespace(d.Namespace)); err != nil {
			return false, err
		}
		seen = seen[:0]
		for _, e := range l.Items {
			if e.Reason != contract.ReasonPodUnpinned || e.InvolvedObject.Name != d.Name || e.ReportingController != contract.EventSource {
				continue
			}
			seen = append(seen, e.Message)
			if e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, "("+string(reason)+")") {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("no %s Event on %s naming %s; saw %q", contract.ReasonPodUnpinned, d.Name, reason, seen)
	}
}

// failurePinningStatus runs `confighash status -o json` on ns, as a user
// does, until workload name's pinning counts satisfy ok (the pods of a
// finished rollout's old revision take a moment to go), and fails with
// the last counts if they never do within 30 s.
func failurePinningStatus(t *testing.T, ns, name, want string, ok func(status.Pinning) bool) {
	t.Helper()
	var last status.Pinning
	var line string
	err := wait.PollUntilContextTimeout(env.SpecContext(t), time.Second, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var stdout, stderr bytes.Buffer
		if err := app.Run(ctx, []string{"status", "-n", ns, "-o", "json", "--kubeconfig", env.Kubeconfig,
			"--namespace-of-confighash", framework.Namespace}, &stdout, &stderr); err != nil && stdout.Len() == 0 {
			return false, fmt.Errorf("status: %w\n%s", err, stderr.String())
		}
		var r status.Report
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
			return false, fmt.Errorf("decoding status: %w\n%s", err, stdout.String())
		}
		for _, w := range r.Workloads {
			if w.Name == name && w.Pinning != nil {
				last, line = *w.Pinning, string(w.State)+": "+w.Reason
				return ok(last), nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("status of %s (%s): pinning %+v, want %s (%v)", name, line, last, want, err)
		return
	}
	t.Logf("status of %s (%s): pinning %+v", name, line, last)
}

// failurePodOf is a pod of ReplicaSet rs as its controller would make it:
// its template, its labels and stamp, rs its controller.
func failurePodOf(rs *appsv1.ReplicaSet, name string) *corev1.Pod {
	tpl := rs.Spec.Template.DeepCopy()
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: rs.Namespace, Name: name, Labels: tpl.Labels, Annotations: tpl.Annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}},
		Spec: tpl.Spec,
	}
}

// lookalikeNamer returns the name the product gives the snapshot of d's
// read of ConfigMap shared holding mode=value: pinning.Name under
// confighash's key, read from its Secret as a tenant who learnt a name
// could not, but as robust as the product's own computation.
func lookalikeNamer(t *testing.T, d *appsv1.Deployment) func(value string) string {
	t.Helper()
	s := &corev1.Secret{}
	if err := env.Client.Get(env.SpecContext(t), client.ObjectKey{Namespace: framework.Namespace, Name: "confighash-hmac-key"}, s); err != nil {
		t.Fatal(err)
	}
	key := s.Data[hashkey.DataKey]
	refs, err := hasher.References(&d.Spec.Template.Spec, d.Spec.Template.Annotations)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(refs, func(r hasher.Reference) bool { return r.Kind == hasher.ConfigMap && r.Name == "shared" })
	if i < 0 {
		t.Fatalf("%s reads no ConfigMap shared: %+v", d.Name, refs)
	}
	ref := refs[i]
	return func(value string) string {
		c := hasher.ConfigMapContent(&corev1.ConfigMap{Data: map[string]string{"mode": value}})
		return pinning.Name(key, d.Namespace, ref.Source, pinning.Select(ref, c))
	}
}
