package restamp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/health"
)

// pagedPods serves pods a page at a time, as the apiserver does, and
// records each LIST's limit.
type pagedPods struct {
	pods   []corev1.Pod
	limits []int64
}

func (p *pagedPods) Get(context.Context, client.ObjectKey, client.Object, ...client.GetOption) error {
	return errors.New("the judge GETs no pod")
}

func (p *pagedPods) List(_ context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := (&client.ListOptions{}).ApplyOptions(opts)
	p.limits = append(p.limits, o.Limit)
	from := 0
	if o.Continue != "" {
		var err error
		if from, err = strconv.Atoi(o.Continue); err != nil {
			return err
		}
	}
	to := len(p.pods)
	if o.Limit > 0 {
		to = min(to, from+int(o.Limit))
	}
	pl := list.(*corev1.PodList)
	pl.Items = append([]corev1.Pod(nil), p.pods[from:to]...)
	if to < len(p.pods) {
		pl.Continue = strconv.Itoa(to)
	}
	return nil
}

// judgedPod is a running pod of web's ReplicaSet carrying stamp, with
// bulk in its spec.
func judgedPod(i int, stamp string, started time.Time) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("web-7b9c-%04d", i), Namespace: "shop",
			Annotations:     map[string]string{contract.ChecksumAnnotation: stamp, "junk": strings.Repeat("x", 4<<10)},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-7b9c", UID: "rs", Controller: ptr.To(true)}}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "img"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "app",
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(started)}}}}},
	}
}

// TestJudgePagesPods: the judge lists a reader's pods in pages of at most
// podPageSize and at most maxJudgedPods in all, however many the selector
// matches; it keeps only the new revision's, slimmed; a failing new pod
// in the pages it reads fails the rollout.
func TestJudgePagesPods(t *testing.T) {
	const stamp = "v2:k:new"
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop", Generation: 2, UID: "d"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](3000), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{contract.ChecksumAnnotation: stamp}}}},
		Status: appsv1.DeploymentStatus{ObservedGeneration: 2, Replicas: 3000, UpdatedReplicas: 3000, ReadyReplicas: 3000, AvailableReplicas: 3000,
			Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: corev1.ConditionTrue}}}}
	kind := deploymentKind(t)
	req := reqIn("shop", "web")

	live := &pagedPods{}
	for i := range 3000 {
		s := stamp
		if i%2 == 1 {
			s = "v2:k:old"
		}
		live.pods = append(live.pods, judgedPod(i, s, now.Add(-time.Hour)))
	}
	r := &reconciler{live: live, rollouts: rolloutOptions{soak: time.Minute}}
	v, err := r.judgeWithPods(context.Background(), req, kind, d, stamp, now.Add(-2*time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	if v.State != health.Succeeded {
		t.Errorf("verdict %+v, want succeeded", v)
	}
	listed := int64(0)
	for _, l := range live.limits {
		if l <= 0 || l > podPageSize {
			t.Fatalf("a LIST asked for %d pods, want at most %d (limits %v)", l, podPageSize, live.limits)
		}
		listed += l
	}
	if listed > maxJudgedPods {
		t.Errorf("listed %d pods in %d pages, want at most %d", listed, len(live.limits), maxJudgedPods)
	}

	// A crash loop among the new pods the judge reads fails the rollout.
	live.pods[4].Status.ContainerStatuses[0].State = corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}
	live.limits = nil
	if v, err := r.judgeWithPods(context.Background(), req, kind, d, stamp, now.Add(-2*time.Hour), now); err != nil || v.State != health.Failed {
		t.Errorf("with a crash-looping new pod: %+v, %v; want failed", v, err)
	}

	// What is kept: the new revision's pods, slimmed.
	kept, err := podsOfRevision(context.Background(), live, "shop", nil, d, stamp)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != maxJudgedPods/2 {
		t.Errorf("kept %d pods, want the %d of the new revision among the first %d", len(kept), maxJudgedPods/2, maxJudgedPods)
	}
	for _, p := range kept {
		if p.Annotations[contract.ChecksumAnnotation] != stamp || p.Annotations["junk"] != "" {
			t.Fatalf("kept pod %s: %v", p.Name, p.Annotations)
		}
	}
	if none, err := podsOfRevision(context.Background(), live, "shop", nil, d, ""); err != nil || len(none) != 0 {
		t.Errorf("with no stamp: %d pods, %v; want none listed", len(none), err)
	}
}
