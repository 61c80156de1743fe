package restamp

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/internal/contract"
)

var hookKey = []byte("0123456789abcdef0123456789abcdef")

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

func TestReconcile(t *testing.T) {
	data := map[string]string{"k": "v2"}
	current := wantSum(t, data)

	appCM := func() client.Object {
		return slimCM(t, "ns", "app", data)
	}
	web := func(stamp string, mutate ...func(*appsv1.Deployment)) *appsv1.Deployment {
		d := stampedWeb(envFromCM("app"), stamp)
		for _, m := range mutate {
			m(d)
		}
		return d
	}

	tests := map[string]struct {
		objects      []client.Object
		req          Request
		flapsBefore  int    // re-stamps of the workload already recorded, one a minute before now
		wantHold     string // the hold annotation after; "" means none
		wantStamp    string
		wantEvent    string // prefix; "" means no event
		wantRequeue  time.Duration
		wantRestamps map[string]float64 // reason -> count
		wantHolds    float64
		wantMissing  float64
		wantPending  bool // the recorded change is kept for a later try
	}{
		"stale stamp is replaced": {
			objects:      []client.Object{servedNS(), appCM(), web("v1:stale")},
			req:          webReq,
			wantStamp:    current,
			wantEvent:    "Normal ConfigChanged config changed (configmap/app); re-stamped pod template",
			wantRestamps: map[string]float64{restampChanged: 1},
		},
		"first stamp": {
			objects:      []client.Object{servedNS(), appCM(), web("")},
			req:          webReq,
			wantStamp:    current,
			wantEvent:    "Normal ConfigChanged",
			wantRestamps: map[string]float64{restampFirstStamp: 1},
		},
		"start-up replay catches up": {
			objects:      []client.Object{servedNS(), appCM(), web("v1:stale")},
			req:          Request{KindName: "Deployment", NamespacedName: webReq.NamespacedName, Recheck: true},
			wantStamp:    current,
			wantEvent:    "Normal ConfigChanged",
			wantRestamps: map[string]float64{restampRecheck: 1},
		},
		"startup leaves unstamped workloads alone": {
			objects: []client.Object{servedNS(), appCM(), web("")},
			req:     Request{KindName: "Deployment", NamespacedName: webReq.NamespacedName, Recheck: true},
		},
		"current stamp is left alone": {
			objects:   []client.Object{servedNS(), appCM(), web(current)},
			req:       webReq,
			wantStamp: current,
		},
		"namespace not enabled": {
			objects:   []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}}, appCM(), web("v1:stale")},
			req:       webReq,
			wantStamp: "v1:stale",
		},
		"namespace missing": {
			objects:   []client.Object{appCM(), web("v1:stale")},
			req:       webReq,
			wantStamp: "v1:stale",
		},
		"opted out": {
			objects: []client.Object{servedNS(), appCM(), web("v1:stale", func(d *appsv1.Deployment) {
				d.Annotations = map[string]string{contract.InjectionAnnotation: contract.InjectionDisabled}
			})},
			req:       webReq,
			wantStamp: "v1:stale",
		},
		"workload being deleted": {
			objects: []client.Object{servedNS(), appCM(), web("v1:stale", func(d *appsv1.Deployment) {
				now := metav1.Now()
				d.DeletionTimestamp = &now
				d.Finalizers = []string{"example.com/hold"}
			})},
			req:       webReq,
			wantStamp: "v1:stale",
		},
		"workload gone": {
			objects: []client.Object{servedNS(), appCM()},
			req:     webReq,
		},
		"missing source keeps the stamp": {
			objects:     []client.Object{servedNS(), web("v1:stale")},
			req:         webReq,
			wantStamp:   "v1:stale",
			wantEvent:   "Warning SourceMissing required configmap/app missing; not rolling until it exists",
			wantMissing: 1,
		},
		"below the flap limit": {
			objects:      []client.Object{servedNS(), appCM(), web("v1:stale")},
			req:          webReq,
			flapsBefore:  2,
			wantStamp:    current,
			wantEvent:    "Normal ConfigChanged",
			wantRestamps: map[string]float64{restampChanged: 1},
		},
		"flap hold": {
			objects:     []client.Object{servedNS(), appCM(), web("v1:stale")},
			req:         webReq,
			flapsBefore: 3,
			wantStamp:   "v1:stale",
			wantEvent:   "Warning FlapHold re-stamped too often; holding until its sources have not changed for 1m0s (backoff level 0)",
			wantRequeue: flapQuiet,
			wantHolds:   1,
			wantPending: true,
			wantHold:    "v1 since=2030-01-02T03:04:05Z level=0 quiet=1m0s",
		},
		"flap hold: a re-check shares the workload's limit": {
			objects:     []client.Object{servedNS(), appCM(), web("v1:stale")},
			req:         Request{KindName: "Deployment", NamespacedName: webReq.NamespacedName, Recheck: true},
			flapsBefore: 3,
			wantStamp:   "v1:stale",
			wantEvent:   "Warning FlapHold",
			wantRequeue: flapQuiet,
			wantHolds:   1,
			wantPending: true,
			wantHold:    "v1 since=2030-01-02T03:04:05Z level=0 quiet=1m0s",
		},
		"held by a former leader": {
			objects:     []client.Object{servedNS(), appCM(), web("v1:stale", withHold(sealedOn(t, "v1 since=2030-01-02T02:00:00Z level=2 quiet=4m0s")))},
			req:         webReq,
			wantStamp:   "v1:stale",
			wantRequeue: 4 * time.Minute,
			wantHolds:   1,
			wantPending: true,
			wantHold:    "v1 since=2030-01-02T02:00:00Z level=2 quiet=4m0s",
		},
		"held by a former leader, stamp current: the hold runs its course": {
			objects:     []client.Object{servedNS(), appCM(), web(current, withHold(sealedOn(t, "v1 since=2030-01-02T02:00:00Z level=0 quiet=1m0s")))},
			req:         webReq,
			wantStamp:   current,
			wantRequeue: flapQuiet,
			wantPending: true,
			wantHold:    "v1 since=2030-01-02T02:00:00Z level=0 quiet=1m0s",
		},
		"a hold confighash did not seal (by hand, before the upgrade): ignored, with a warning": {
			objects:   []client.Object{servedNS(), appCM(), web(current, withHold("someone's note"))},
			req:       webReq,
			wantStamp: current,
			wantEvent: "Warning InvalidAnnotation confighash.dev/hold is not sealed by confighash",
			wantHold:  "someone's note",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ctx := quietCtx()
			now := t0
			c := fake.NewClientBuilder().WithObjects(tc.objects...).Build()
			r, rec := testReconciler(t, c, newFlapGuard(testFlapOptions(), 100), func() time.Time { return now })
			metrics := r.metrics
			for i := range tc.flapsBefore {
				r.flaps.restamped(keyOf(webReq), now.Add(-time.Duration(tc.flapsBefore-i)*time.Minute))
			}
			recordChange(r.changes, tc.req, now)

			res, err := r.Reconcile(ctx, tc.req)
			if err != nil {
				t.Fatalf("Reconcile: %v", err)
			}
			if res.RequeueAfter != tc.wantRequeue {
				t.Errorf("RequeueAfter = %v, want %v", res.RequeueAfter, tc.wantRequeue)
			}

			d := &appsv1.Deployment{}
			err = c.Get(ctx, tc.req.NamespacedName, d)
			switch {
			case client.IgnoreNotFound(err) != nil:
				t.Fatal(err)
			case err == nil:
				if got := d.Spec.Template.Annotations[contract.ChecksumAnnotation]; got != tc.wantStamp {
					t.Errorf("stamp = %q, want %q", got, tc.wantStamp)
				}
				if _, found := d.Annotations[contract.ChecksumAnnotation]; found {
					t.Errorf("stamp written to the Deployment's own annotations")
				}
				// A hold the hook wrote is sealed: the test names what it says.
				if got := contract.Unsealed(d.Annotations[contract.HoldAnnotation]); got != tc.wantHold {
					t.Errorf("hold annotation = %q, want %q", got, tc.wantHold)
				}
				if _, found := d.Spec.Template.Annotations[contract.HoldAnnotation]; found {
					t.Errorf("hold written to the pod template, which would roll it")
				}
			}

			expectOneEvent(t, rec, tc.wantEvent)

			for _, reason := range []string{restampChanged, restampFirstStamp, restampRecheck} {
				if got := counterValue(t, metrics.Restamps.WithLabelValues("Deployment", tc.req.Namespace, reason)); got != tc.wantRestamps[reason] {
					t.Errorf("restamps{reason=%s} = %v, want %v", reason, got, tc.wantRestamps[reason])
				}
			}
			if got := counterValue(t, metrics.Holds.WithLabelValues("Deployment")); got != tc.wantHolds {
				t.Errorf("holds = %v, want %v", got, tc.wantHolds)
			}
			if got := counterValue(t, metrics.Missing.WithLabelValues("Deployment")); got != tc.wantMissing {
				t.Errorf("missing = %v, want %v", got, tc.wantMissing)
			}
			// Every way out forgets the change but those that come back for
			// it, which keep all of it.
			checkPending(t, r.changes, tc.req, tc.wantPending)
			// A re-stamp counts towards the flap limit.
			if len(tc.wantRestamps) > 0 {
				if got := len(r.flaps.entries[keyOf(tc.req)].restamps); got != tc.flapsBefore+1 {
					t.Errorf("flap history has %d entries after a re-stamp, want %d", got, tc.flapsBefore+1)
				}
			}
		})
	}
}
