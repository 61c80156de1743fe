package status

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/status/statustest"
	"github.com/confighash/confighash/internal/workload"
)

// fakeStamper answers as a webhook would, from a table of stamps by
// workload name; a name not in it gets no stamp, as from a webhook that is
// down.
type fakeStamper struct {
	stamps map[string]string
	mu     sync.Mutex
	asked  []string
}

func (f *fakeStamper) Stamp(_ context.Context, obj client.Object) (string, []string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, obj.GetName())
	if obj.GetName() == "broken" {
		return "", nil, errors.New("boom")
	}
	return f.stamps[obj.GetName()], nil, nil
}

// secretValue must never appear in any output.
const secretValue = "hunter2-do-not-print"

func readsSpec(cm, sec string) corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{
		Name: "app", Image: "pause",
		EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}},
		Env: []corev1.EnvVar{{Name: "P", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: sec}, Key: "password"}}}},
	}}}
}

func deploy(ns, name, stamp string, spec corev1.PodSpec, annotations map[string]string) *appsv1.Deployment {
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID("uid-" + name), Annotations: annotations},
		Spec:       appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{Spec: spec}},
	}
	if stamp != "" {
		d.Spec.Template.Annotations = map[string]string{contract.ChecksumAnnotation: stamp}
	}
	return d
}

func event(ns, name, reason, typ string, at time.Time) *corev1.Event {
	return &corev1.Event{
		ObjectMeta:          metav1.ObjectMeta{Namespace: ns, Name: name + "." + reason},
		InvolvedObject:      corev1.ObjectReference{Kind: "Deployment", APIVersion: "apps/v1", Namespace: ns, Name: name, UID: types.UID("uid-" + name)},
		Reason:              reason,
		Type:                typ,
		Message:             reason + " message",
		EventTime:           metav1.NewMicroTime(at),
		ReportingController: contract.EventSource,
		ReportingInstance:   "confighash-1",
		Action:              "Restamp",
	}
}

func TestCollect(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	labelled := map[string]string{contract.InjectionLabel: contract.InjectionEnabled}
	spec := readsSpec("cfg", "sec")
	optOut := map[string]string{contract.InjectionAnnotation: contract.InjectionDisabled}
	otherEvent := event("on", "stale", contract.ReasonConfigChanged, corev1.EventTypeNormal, t0.Add(time.Hour))
	otherEvent.Name, otherEvent.ReportingController = "not-ours", "someone-else"
	oldObject := event("on", "stale", contract.ReasonFlapHold, corev1.EventTypeWarning, t0.Add(time.Hour))
	oldObject.Name, oldObject.InvolvedObject.UID = "earlier-object", "uid-of-a-deleted-one"
	c := statustest.NewClient(t,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "on", Labels: labelled}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "off"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "confighash-system", Labels: labelled}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "on", Name: "cfg"}, Data: map[string]string{"a": secretValue}},
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "on", Name: "sec"}, Data: map[string][]byte{"password": []byte(secretValue)}},
		deploy("on", "web", "v1:good", spec, nil),
		deploy("on", "stale", "v1:old", spec, nil),
		deploy("on", "held", "v1:old", spec, map[string]string{contract.HoldAnnotation: sealed("v1 since=2026-01-02T03:05:05Z level=0 quiet=1m0s")}),
		deploy("on", "missing", "v1:good", readsSpec("cfg", "gone"), nil),
		deploy("on", "optout", "", spec, optOut),
		deploy("on", "down", "v1:good", spec, nil),
		deploy("on", "broken", "v1:good", spec, nil),
		deploy("off", "web", "", spec, nil),
		deploy("confighash-system", "confighash", "", spec, nil),
		&batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Namespace: "on", Name: "nightly"}, Spec: batchv1.CronJobSpec{
			JobTemplate: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{contract.ChecksumAnnotation: "v1:good"}},
				Spec: corev1.PodSpec{Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "opt"}, Optional: ptr.To(true)}}}}},
			}}}}},
		event("on", "held", contract.ReasonConfigChanged, corev1.EventTypeNormal, t0),
		event("on", "held", contract.ReasonFlapHold, corev1.EventTypeWarning, t0.Add(time.Minute)),
		event("on", "stale", contract.ReasonConfigChanged, corev1.EventTypeNormal, t0),
		otherEvent, oldObject,
	)
	st := &fakeStamper{stamps: map[string]string{
		"web": "v1:good", "stale": "v1:new", "held": "v1:new", "missing": "v1:missing", "nightly": "v1:good",
		"confighash": "v1:never-asked", "optout": "v1:never-asked",
	}}

	t.Run("all namespaces", func(t *testing.T) {
		st.asked = nil
		r, err := Collect(t.Context(), c, Options{Kinds: workload.Kinds(), AllNamespaces: true, ConfighashNamespace: "confighash-system", Stamper: st})
		if err != nil {
			t.Fatal(err)
		}
		want := []struct {
			ref   string
			state State
		}{
			{"confighash-system deployment/confighash", StateNotInjected},
			{"off deployment/web", StateNotInjected},
			{"on deployment/broken", StateUnknown},
			{"on deployment/down", StateUnknown},
			{"on deployment/held", StateHeld},
			{"on deployment/missing", StateMissingSource},
			{"on deployment/optout", StateNotInjected},
			{"on deployment/stale", StateStale},
			{"on deployment/web", StateCurrent},
			{"on cronjob/nightly", StateCurrent},
		}
		if len(r.Workloads) != len(want) {
			t.Fatalf("got %d workloads, want %d: %+v", len(r.Workloads), len(want), r.Workloads)
		}
		for i, w := range r.Workloads {
			if ref := w.Namespace + " " + w.Ref(); ref != want[i].ref || w.State != want[i].state {
				t.Errorf("workload %d = %s %s (%s), want %s %s", i, ref, w.State, w.Reason, want[i].ref, want[i].state)
			}
		}
		for _, name := range st.asked {
			if name == "confighash" || name == "optout" {
				t.Errorf("asked the webhook about %s, which it never stamps", name)
			}
		}
		if r.Summary[StateCurrent] != 2 || r.Summary[StateNotInjected] != 3 {
			t.Errorf("summary = %v", r.Summary)
		}
		byName := map[string]*Workload{}
		for i := range r.Workloads {
			byName[r.Workloads[i].Namespace+"/"+r.Workloads[i].Name] = &r.Workloads[i]
		}
		stale := byName["on/stale"]
		if stale.LastConfigChanged == nil || !stale.LastConfigChanged.Time.Equal(t0) || stale.LastFlapHold != nil {
			t.Errorf("stale's events: %+v %+v; want only ours, about this object", stale.LastConfigChanged, stale.LastFlapHold)
		}
		if w := byName["on/web"]; len(w.Sources) != 2 || w.Sources[0].Ref() != "configmap/cfg" || w.Sources[0].Keys[0] != AllKeys ||
			w.Sources[1].Ref() != "secret/sec" || w.Sources[1].Keys[0] != "password" || w.Sources[1].Presence != Present {
			t.Errorf("web's sources = %+v", w.Sources)
		}
		if w := byName["on/missing"]; w.Sources[1].Presence != Absent {
			t.Errorf("missing's secret = %+v", w.Sources[1])
		}
		if w := byName["on/down"]; !strings.Contains(w.Reason, "--check-install") {
			t.Errorf("down's reason = %q, want a --check-install hint", w.Reason)
		}
		if w := byName["on/broken"]; !strings.Contains(w.Reason, "boom") {
			t.Errorf("broken's reason = %q", w.Reason)
		}
		if w := byName["on/nightly"]; w.Kind != "CronJob" || len(w.Sources) != 1 || !w.Sources[0].Optional || w.Sources[0].Presence != Absent {
			t.Errorf("nightly = %+v", w)
		}

		var out bytes.Buffer
		if err := WriteJSON(&out, r); err != nil {
			t.Fatal(err)
		}
		if err := WriteTable(&out, r, TableOptions{AllNamespaces: true, Details: true, Now: t0}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.String(), secretValue) {
			t.Fatalf("a config value leaked into the output:\n%s", out.String())
		}
	})

	t.Run("one named workload", func(t *testing.T) {
		r, err := Collect(t.Context(), c, Options{Kinds: workload.Kinds(), Target: Target{Name: "held"}, Namespace: "on", Stamper: st})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Workloads) != 1 || r.Workloads[0].State != StateHeld || r.Workloads[0].Hold == nil ||
			r.Workloads[0].Hold.Quiet != "1m0s" || !r.Workloads[0].Hold.Since.Equal(t0.Add(time.Minute)) {
			t.Fatalf("got %+v", r.Workloads)
		}
	})

	t.Run("named workload of another kind", func(t *testing.T) {
		_, err := Collect(t.Context(), c, Options{Kinds: workload.Kinds(), Target: Target{KindName: "StatefulSet", Name: "web"}, Namespace: "on", Stamper: st})
		var nf *NotFoundError
		if !errors.As(err, &nf) || err.Error() != "statefulset/web not found in namespace on" {
			t.Fatalf("err = %v, want not found", err)
		}
	})

	t.Run("one namespace", func(t *testing.T) {
		r, err := Collect(t.Context(), c, Options{Kinds: workload.Kinds(), Namespace: "off", Stamper: st})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Workloads) != 1 || r.Workloads[0].State != StateNotInjected || !strings.Contains(r.Workloads[0].Reason, "not labelled") {
			t.Fatalf("got %+v", r.Workloads)
		}
	})
}

func TestInjectionOf(t *testing.T) {
	labelled := map[string]string{contract.InjectionLabel: contract.InjectionEnabled}
	optOut := map[string]string{contract.InjectionAnnotation: contract.InjectionDisabled}
	tests := map[string]struct {
		ns          string
		labels      map[string]string
		nsErr       error
		annotations map[string]string
		want        InjectionState
	}{
		"labelled":                  {ns: "a", labels: labelled, want: InjectionOn},
		"unlabelled":                {ns: "a", want: InjectionOff},
		"other label value":         {ns: "a", labels: map[string]string{contract.InjectionLabel: "true"}, want: InjectionOff},
		"opted out":                 {ns: "a", labels: labelled, annotations: optOut, want: InjectionOff},
		"kube-system":               {ns: "kube-system", labels: labelled, want: InjectionOff},
		"confighash's own":          {ns: "ch", labels: labelled, want: InjectionOff},
		"unreadable namespace":      {ns: "a", nsErr: errors.New("forbidden"), want: InjectionUnknown},
		"opted out, unreadable ns":  {ns: "a", nsErr: errors.New("forbidden"), annotations: optOut, want: InjectionOff},
		"other annotation value on": {ns: "a", labels: labelled, annotations: map[string]string{contract.InjectionAnnotation: "enabled"}, want: InjectionOn},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := injectionOf(tc.ns, tc.labels, tc.nsErr, tc.annotations, "ch")
			if got.State != tc.want || got.Reason == "" {
				t.Errorf("got %+v, want %s", got, tc.want)
			}
		})
	}
}

func TestDryRunCopy(t *testing.T) {
	d := deploy("ns", "web", "v1:old", readsSpec("cfg", "sec"), map[string]string{contract.IncludeAnnotation: "configmap/extra"})
	d.ResourceVersion, d.Generation = "42", 3
	d.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	d.OwnerReferences = []metav1.OwnerReference{{Name: "owner"}}
	d.Finalizers = []string{"x"}
	d.Status.Replicas = 3
	cp := dryRunCopy(workload.Kinds(), d).(*appsv1.Deployment)
	if cp.UID != "" || cp.ResourceVersion != "" || cp.Generation != 0 || cp.ManagedFields != nil ||
		cp.OwnerReferences != nil || cp.Finalizers != nil || cp.Status.Replicas != 0 || cp.Name != "" {
		t.Errorf("copy keeps identity or status: %+v", cp.ObjectMeta)
	}
	if cp.Namespace != "ns" || cp.Annotations[contract.IncludeAnnotation] != "configmap/extra" {
		t.Errorf("copy lost namespace or annotations: %+v", cp.ObjectMeta)
	}
	if _, ok := cp.Spec.Template.Annotations[contract.ChecksumAnnotation]; ok {
		t.Error("copy keeps the stamp, so a webhook that did not act would go unnoticed")
	}
	if d.Spec.Template.Annotations[contract.ChecksumAnnotation] != "v1:old" || d.UID == "" {
		t.Error("the original was modified")
	}
}

func TestCopyName(t *testing.T) {
	if got := copyName("web"); got != "web-chstatus" {
		t.Errorf("copyName(web) = %q", got)
	}
	long := strings.Repeat("a", 40) + "-" + strings.Repeat("b", 40)
	got := copyName(long)
	if len(got) > maxCopyName || !strings.HasSuffix(got, copySuffix) || strings.Contains(got, "--") {
		t.Errorf("copyName(long) = %q (%d)", got, len(got))
	}
}

func TestEventOf(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	e := event("ns", "web", contract.ReasonFlapHold, corev1.EventTypeWarning, t0)
	if got := eventOf(e); !got.Time.Equal(t0) || got.Count != 1 {
		t.Errorf("single event = %+v", got)
	}
	e.Series = &corev1.EventSeries{Count: 4, LastObservedTime: metav1.NewMicroTime(t0.Add(time.Hour))}
	if got := eventOf(e); !got.Time.Equal(t0.Add(time.Hour)) || got.Count != 4 {
		t.Errorf("series = %+v", got)
	}
	legacy := &corev1.Event{Reason: contract.ReasonConfigChanged, Count: 2, FirstTimestamp: metav1.NewTime(t0), LastTimestamp: metav1.NewTime(t0.Add(time.Minute))}
	if got := eventOf(legacy); !got.Time.Equal(t0.Add(time.Minute)) || got.Count != 2 {
		t.Errorf("core/v1 event = %+v", got)
	}
}
