package status

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/pinning"
	"github.com/confighash/confighash/internal/status/statustest"
	"github.com/confighash/confighash/internal/workload"
)

func podOfRS(ns, name, rs, stamp, pinned string, labels map[string]string) *corev1.Pod {
	yes := true
	a := map[string]string{contract.ChecksumAnnotation: stamp}
	if pinned != "" {
		a[pinning.PodAnnotation] = pinned
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels, Annotations: a,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs, UID: "uid-" + "rs", Controller: &yes}}}}
}

// TestCollectPinning: in a namespace that pins, status counts the
// workload's pods by what the pod webhook marked on them; elsewhere it
// says nothing and lists no pod.
func TestCollectPinning(t *testing.T) {
	labelled := map[string]string{contract.InjectionLabel: contract.InjectionEnabled}
	pins := map[string]string{contract.InjectionLabel: contract.InjectionEnabled, pinning.NamespaceLabel: pinning.NamespaceEnabled}
	app := map[string]string{"app": "web"}
	withSelector := func(d *appsv1.Deployment) *appsv1.Deployment {
		d.Spec.Selector = &metav1.LabelSelector{MatchLabels: app}
		d.Spec.Template.Labels = app
		return d
	}
	spec := readsSpec("cfg", "sec")
	c := statustest.NewClient(t,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "pins", Labels: pins}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "plain", Labels: labelled}},
		withSelector(deploy("pins", "web", "v2:new", spec, nil)),
		withSelector(deploy("pins", "off", "v2:new", spec, map[string]string{pinning.PinAnnotation: pinning.PinOff})),
		withSelector(deploy("plain", "web", "v2:new", spec, nil)),
		podOfRS("pins", "web-1", "web-a", "v2:new", "true", app),
		podOfRS("pins", "web-2", "web-a", "v2:new", "false: write-failed", app),
		podOfRS("pins", "web-3", "web-b", "v2:old", "true", app),
		podOfRS("pins", "web-4", "web-a", "v2:new", "", app),
		podOfRS("pins", "web-5", "web-a", "", "", app),
		podOfRS("pins", "other", "x", "v2:new", "true", map[string]string{"app": "other"}),
		podOfRS("plain", "web-1", "web-a", "v2:new", "", app),
	)
	kinds, err := workload.NewRegistry()
	if err != nil {
		t.Fatal(err)
	}
	r, err := Collect(context.Background(), c, Options{AllNamespaces: true, Kinds: kinds, ConfighashNamespace: "confighash-system",
		Stamper: &fakeStamper{stamps: map[string]string{"web": "v2:new", "off": "v2:new"}}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*Pinning{}
	for i := range r.Workloads {
		got[r.Workloads[i].Namespace+"/"+r.Workloads[i].Name] = r.Workloads[i].Pinning
	}
	want := Pinning{Pods: 5, Pinned: 2, Unpinned: map[string]int{"write-failed": 1}, NotSeen: 1, Unstamped: 1, OtherRevisions: 2}
	if p := got["pins/web"]; p == nil || fmt.Sprint(*p) != fmt.Sprint(want) {
		t.Errorf("pins/web: %+v, want %+v", p, want)
	}
	if p := got["pins/off"]; p == nil || !p.OptedOut || p.Pods != 0 {
		t.Errorf("pins/off: %+v, want opted out", p)
	}
	if p := got["plain/web"]; p != nil {
		t.Errorf("plain/web: %+v, want nothing where the namespace does not pin", p)
	}
	line := describePinning(got["pins/web"])
	for _, s := range []string{"2 of 5 pods pinned", "1 unpinned (write-failed)", "1 not seen by the pod webhook", "1 unstamped", "2 of another revision"} {
		if !strings.Contains(line, s) {
			t.Errorf("%q does not say %q", line, s)
		}
	}
}

// TestPinningPodsBounded: one page of pods is read, and a bigger workload
// says it was cut.
func TestPinningPodsBounded(t *testing.T) {
	pins := map[string]string{contract.InjectionLabel: contract.InjectionEnabled, pinning.NamespaceLabel: pinning.NamespaceEnabled}
	app := map[string]string{"app": "web"}
	objs := []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "pins", Labels: pins}}}
	for i := range pinningPodLimit + 3 {
		objs = append(objs, podOfRS("pins", fmt.Sprint("web-", i), "web-a", "v2:new", "true", app))
	}
	c := statustest.NewClient(t, objs...)
	d := deploy("pins", "web", "v2:new", readsSpec("cfg", "sec"), nil)
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: app}
	p := pinningOf(context.Background(), c, d, "v2:new", pins, nil)
	if p == nil || p.Pods != pinningPodLimit || !p.Truncated {
		t.Fatalf("%+v, want %d pods counted and truncated", p, pinningPodLimit)
	}
	if line := describePinning(p); !strings.Contains(line, "of the first") {
		t.Errorf("%q does not say it was cut", line)
	}
}

// TestClassifyPod: a pod's marks, as the pod webhook writes them (or not),
// tell pinned, unpinned and why, not seen by the webhook (stamped, no
// mark) and unstamped (never the webhook's to pin) apart.
func TestClassifyPod(t *testing.T) {
	stamped := func(mark string, has bool) map[string]string {
		a := map[string]string{contract.ChecksumAnnotation: "v2:abc"}
		if has {
			a[pinning.PodAnnotation] = mark
		}
		return a
	}
	for name, tc := range map[string]struct {
		a      map[string]string
		want   podPin
		reason string
	}{
		"pinned":                   {stamped("true", true), podPinned, ""},
		"unpinned":                 {stamped("false: quota-exceeded", true), podUnpinned, "quota-exceeded"},
		"unpinned, no space":       {stamped("false:look-alike", true), podUnpinned, "look-alike"},
		"unpinned, no reason":      {stamped("false:", true), podUnpinned, "unknown"},
		"a mark the webhook never": {stamped("yes", true), podUnpinned, "unknown"},
		"reason too long":          {stamped("false: "+strings.Repeat("x", 65), true), podUnpinned, "unknown"},
		"stamped, no mark":         {stamped("", false), podNotSeen, ""},
		"stamped, empty mark":      {stamped("", true), podUnpinned, "unknown"},
		"no stamp, no mark":        {map[string]string{}, podUnstamped, ""},
		"no annotations":           {nil, podUnstamped, ""},
		"marked, stamp lost":       {map[string]string{pinning.PodAnnotation: "true"}, podPinned, ""},
	} {
		if got, reason := classifyPod(tc.a); got != tc.want || reason != tc.reason {
			t.Errorf("%s: %v %q, want %v %q", name, got, reason, tc.want, tc.reason)
		}
	}
}

// TestPinningMarkInTemplate: a pod template carrying the pinning mark
// makes every pod start marked, so status says the counts cannot be
// trusted.
func TestPinningMarkInTemplate(t *testing.T) {
	pins := map[string]string{contract.InjectionLabel: contract.InjectionEnabled, pinning.NamespaceLabel: pinning.NamespaceEnabled}
	app := map[string]string{"app": "web"}
	c := statustest.NewClient(t, podOfRS("pins", "web-1", "web-a", "v2:new", "true", app))
	d := deploy("pins", "web", "v2:new", readsSpec("cfg", "sec"), nil)
	d.Spec.Selector = &metav1.LabelSelector{MatchLabels: app}
	for _, tpl := range []map[string]string{nil, {pinning.PodAnnotation: "true"}} {
		p := pinningOf(context.Background(), c, d, "v2:new", pins, tpl)
		_, want := tpl[pinning.PodAnnotation]
		if p == nil || p.MarkInTemplate != want || p.Pinned != 1 {
			t.Fatalf("template %v: %+v, want 1 pinned, mark in template %v", tpl, p, want)
		}
		if got := strings.Contains(describePinning(p), "cannot be trusted"); got != want {
			t.Errorf("template %v: %q says the counts cannot be trusted: %v, want %v", tpl, describePinning(p), got, want)
		}
	}
}
