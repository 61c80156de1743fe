package restamp

import (
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

// clockCM is configmap/clock as an operator keeps rewriting it, ignored or not.
func clockCM(at string, ignore bool) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "clock", Namespace: "ns"}, Data: map[string]string{"t": at}}
	if ignore {
		cm.Annotations = map[string]string{contract.IgnoreAnnotation: contract.IgnoreTrue}
	}
	return cm
}

func appCMWith(v string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"}, Data: map[string]string{"k": v}}
}

// readsAppAndClock reads configmap/app and configmap/clock whole.
func readsAppAndClock() corev1.PodSpec {
	spec := envFromCM("app")
	spec.Containers[0].EnvFrom = append(spec.Containers[0].EnvFrom, corev1.EnvFromSource{
		ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "clock"}}})
	return spec
}

func stampFor(t *testing.T, app, clock *corev1.ConfigMap) string {
	t.Helper()
	return stampOf(t, hookKey, "ns", readsAppAndClock(), nil, func(s hasher.Source) (hasher.Content, bool) {
		if s.Name == "app" {
			return hasher.ConfigMapContent(app), true
		}
		return hasher.ConfigMapContent(clock), true
	})
}

// TestReconcileIgnoreAnnotation: adding or removing the ignore annotation
// rolls nothing by itself, and neither does an ignored source's content;
// a live change to a source that counts still does.
func TestReconcileIgnoreAnnotation(t *testing.T) {
	live := req("web")
	replay := live
	replay.Recheck = true
	tests := map[string]struct {
		stampedApp, stampedClock *corev1.ConfigMap // the content the stamp was made from
		nowApp, nowClock         *corev1.ConfigMap
		req                      Request
		wantRestamp              bool
		wantKept                 string
	}{
		"annotation added, seen at a restart": {
			stampedApp: appCMWith("1"), stampedClock: clockCM("12:00", false),
			nowApp: appCMWith("1"), nowClock: clockCM("12:00", true),
			req: replay, wantKept: keptIgnoreToggled,
		},
		"annotation removed, content changed while ignored": {
			stampedApp: appCMWith("1"), stampedClock: clockCM("12:00", true),
			nowApp: appCMWith("1"), nowClock: clockCM("12:07", false),
			req: replay, wantKept: keptIgnoreToggled,
		},
		"annotation added, then the ignored source changed, seen at a restart": {
			stampedApp: appCMWith("1"), stampedClock: clockCM("12:00", false),
			nowApp: appCMWith("1"), nowClock: clockCM("12:07", true),
			req: replay, wantKept: keptIgnoredSource,
		},
		"a counted source changes after the annotation was added": {
			stampedApp: appCMWith("1"), stampedClock: clockCM("12:00", false),
			nowApp: appCMWith("2"), nowClock: clockCM("12:07", true),
			req: live, wantRestamp: true,
		},
		"a counted source changes while another is ignored": {
			stampedApp: appCMWith("1"), stampedClock: clockCM("12:00", true),
			nowApp: appCMWith("2"), nowClock: clockCM("12:07", true),
			req: live, wantRestamp: true,
		},
		"nothing ignored, a change caught up at a restart": {
			stampedApp: appCMWith("1"), stampedClock: clockCM("12:00", false),
			nowApp: appCMWith("2"), nowClock: clockCM("12:00", false),
			req: replay, wantRestamp: true,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := quietCtx()
			stored := stampFor(t, tc.stampedApp, tc.stampedClock)
			want := stampFor(t, tc.nowApp, tc.nowClock)
			if !tc.wantRestamp {
				want = stored
			}
			d := stampedWeb(readsAppAndClock(), stored)
			ns := servedNS()
			objs := []client.Object{ns, d}
			for _, cm := range []*corev1.ConfigMap{tc.nowApp, tc.nowClock} {
				objs = append(objs, slimmed(t, cm.DeepCopy()))
			}
			c := fake.NewClientBuilder().WithObjects(objs...).Build()
			r, _ := testReconciler(t, c, newFlapGuard(Options{FlapLimit: 100, FlapWindow: time.Hour, FlapQuiet: time.Minute, FlapMaxQuiet: time.Minute}, 1), time.Now)
			metrics := r.metrics
			if _, err := r.Reconcile(ctx, tc.req); err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			got := &appsv1.Deployment{}
			if err := c.Get(ctx, tc.req.NamespacedName, got); err != nil {
				t.Fatal(err)
			}
			if s := got.Spec.Template.Annotations[contract.ChecksumAnnotation]; s != want {
				t.Errorf("stamp %s, want %s (re-stamped: %v, want %v)", s, want, s != stored, tc.wantRestamp)
			}
			for _, reason := range []string{keptIgnoreToggled, keptIgnoredSource} {
				wantN := 0.0
				if reason == tc.wantKept {
					wantN = 1
				}
				if n := counterValue(t, metrics.Kept.WithLabelValues("Deployment", reason)); n != wantN {
					t.Errorf("kept{reason=%s} = %v, want %v", reason, n, wantN)
				}
			}
		})
	}
}

// TestHandlerSkipsIgnoredSources: the events of an ignored source, and
// toggling the annotation, queue no reader.
func TestHandlerSkipsIgnoredSources(t *testing.T) {
	slim := func(cm *corev1.ConfigMap) *corev1.ConfigMap {
		return slimmed(t, cm)
	}
	app := func(v string, ignore bool) *corev1.ConfigMap {
		cm := appCMWith(v)
		if ignore {
			cm.Annotations = map[string]string{contract.IgnoreAnnotation: contract.IgnoreTrue}
		}
		return slim(cm)
	}
	tests := map[string]struct {
		old, cur   *corev1.ConfigMap // old nil: create; cur nil: delete of old
		wantQueue  bool
		wantToggle bool // remembered as toggled
	}{
		"ignored content changes":          {old: app("1", true), cur: app("2", true)},
		"annotation added":                 {old: app("1", false), cur: app("1", true), wantToggle: true},
		"annotation removed":               {old: app("1", true), cur: app("1", false), wantToggle: true},
		"annotation added with a change":   {old: app("1", false), cur: app("2", true), wantToggle: true},
		"annotation removed with a change": {old: app("1", true), cur: app("2", false), wantQueue: true, wantToggle: true},
		"ignored source created":           {cur: app("1", true)},
		"ignored source deleted":           {old: app("1", true)},
		"counted content changes":          {old: app("1", false), cur: app("2", false), wantQueue: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := quietCtx()
			e := &enqueuer{cache: readers(t, nil), kinds: newWatched(workload.Kinds().Mutable()...), window: time.Second, changes: newChanges(),
				toggles: newToggles(10)}
			q := &recordingQueue{}
			h := handlerFor[*corev1.ConfigMap](e, hasher.ConfigMap)
			switch {
			case tc.old == nil:
				h.Create(ctx, event.TypedCreateEvent[*corev1.ConfigMap]{Object: tc.cur}, q)
			case tc.cur == nil:
				h.Delete(ctx, event.TypedDeleteEvent[*corev1.ConfigMap]{Object: tc.old}, q)
			default:
				h.Update(ctx, event.TypedUpdateEvent[*corev1.ConfigMap]{ObjectOld: tc.old, ObjectNew: tc.cur}, q)
			}
			if got := len(q.added) > 0; got != tc.wantQueue {
				t.Errorf("queued %q, want readers queued: %v", q.added, tc.wantQueue)
			}
			if got := e.toggles.seen("ns")(hasher.Source{Kind: hasher.ConfigMap, Name: "app"}); got != tc.wantToggle {
				t.Errorf("toggle remembered: %v, want %v", got, tc.wantToggle)
			}
		})
	}
}

func TestTogglesAreBounded(t *testing.T) {
	tg := newToggles(3)
	src := func(i int) hasher.Source { return hasher.Source{Kind: hasher.Secret, Name: fmt.Sprint("s-", i)} }
	for i := range 5 {
		tg.saw("ns", src(i))
		tg.saw("ns", src(i)) // twice is once
	}
	seen := tg.seen("ns")
	for i := range 5 {
		if got, want := seen(src(i)), i >= 2; got != want {
			t.Errorf("source %d remembered: %v, want %v", i, got, want)
		}
	}
	if tg.seen("other")(src(4)) {
		t.Error("a toggle in ns is remembered in another namespace")
	}
	if len(tg.order) != 3 || len(tg.set) != 3 {
		t.Errorf("%d in order, %d in set; want 3", len(tg.order), len(tg.set))
	}
}
