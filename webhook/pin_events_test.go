package webhook

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinner"
)

func podOf(controller metav1.OwnerReference) *corev1.Pod {
	yes := true
	controller.Controller = &yes
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web-1", OwnerReferences: []metav1.OwnerReference{controller}}}
}

func drain(rec *events.FakeRecorder) []string {
	var got []string
	for {
		select {
		case e := <-rec.Events:
			got = append(got, e)
		default:
			return got
		}
	}
}

func TestUnpinnedEventsOncePerWorkloadAndReason(t *testing.T) {
	rec := events.NewFakeRecorder(100)
	now := time.Unix(1_000_000, 0)
	u := NewUnpinnedEvents(rec)
	u.now = func() time.Time { return now }
	rs := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-abc", UID: "rs-uid"}
	deploy := &metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", UID: "deploy-uid"}
	pod := podOf(rs)

	for range 50 {
		u.report(pod, pinner.Result{Reason: pinner.WriteFailed, Workload: deploy})
	}
	u.report(pod, pinner.Result{Reason: pinner.LookAlike, Workload: deploy})
	for _, r := range []pinner.Reason{pinner.Pinned, pinner.OptedOut, pinner.NothingToPin, pinner.DryRun} {
		u.report(pod, pinner.Result{Reason: r, Workload: deploy})
	}
	got := drain(rec)
	if len(got) != 2 || !strings.Contains(got[0], "write-failed") || !strings.Contains(got[1], "look-alike") {
		t.Fatalf("events %q, want one for write-failed and one for look-alike", got)
	}
	for _, e := range got {
		if !strings.Contains(e, corev1.EventTypeWarning+" "+contract.ReasonPodUnpinned) {
			t.Errorf("event %q is not a %s warning", e, contract.ReasonPodUnpinned)
		}
	}

	now = now.Add(unpinnedEvery)
	u.report(pod, pinner.Result{Reason: pinner.WriteFailed, Workload: deploy})
	// The revision was not read: the Event goes to the pod's controller.
	u.report(pod, pinner.Result{Reason: pinner.ReadFailed})
	if got := drain(rec); len(got) != 2 {
		t.Fatalf("events %q after %s, want write-failed again and read-failed", got, unpinnedEvery)
	}
}

func TestUnpinnedEventsBounded(t *testing.T) {
	rec := events.NewFakeRecorder(unpinnedMaxKeys + 10)
	now := time.Unix(1_000_000, 0)
	u := NewUnpinnedEvents(rec)
	u.now = func() time.Time { return now }
	report := func(i int) {
		ref := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: fmt.Sprint("db-", i), UID: types.UID(fmt.Sprint("uid-", i))}
		u.report(podOf(ref), pinner.Result{Reason: pinner.WriteFailed})
	}
	for i := range unpinnedMaxKeys + 5 {
		report(i)
	}
	if got := len(drain(rec)); got != unpinnedMaxKeys {
		t.Fatalf("%d events, want %d: past the bound nothing is remembered, so nothing is reported", got, unpinnedMaxKeys)
	}
	if len(u.last) != unpinnedMaxKeys {
		t.Fatalf("%d entries remembered, want %d", len(u.last), unpinnedMaxKeys)
	}
	now = now.Add(unpinnedEvery)
	report(unpinnedMaxKeys + 7)
	if got := len(drain(rec)); got != 1 || len(u.last) != 1 {
		t.Fatalf("%d events and %d entries once the old ones are due, want 1 and 1", got, len(u.last))
	}
}
