package preview

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
	"github.com/confighash/confighash/internal/workload"
)

var (
	testKey = bytes.Repeat([]byte{7}, 32)
	appCM   = hasher.Source{Kind: hasher.ConfigMap, Name: "app"}
	served  = injection.Decision{Serves: true, Reason: "namespace shop is labelled"}
)

func cmState(t *testing.T, data map[string]string, annotations map[string]string) SourceState {
	t.Helper()
	st, err := StateOf(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "shop", Annotations: annotations}, Data: data}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func secretState(t *testing.T, data map[string]string) SourceState {
	t.Helper()
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "x", Namespace: "shop"}, Data: map[string][]byte{}}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	st, err := StateOf(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// currentStamp is a stamp of the current format (under some key).
var currentStamp = hasher.Version + ":0123456789abcdef:" + strings.Repeat("0", 64)

// deployment reads, through containers, what the given env and volumes
// say; its template carries a stamp of the current format.
func deployment(name string, annotations map[string]string, c corev1.Container, vols ...corev1.Volume) *appsv1.Deployment {
	c.Name, c.Image = "app", "app"
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "shop", Annotations: annotations},
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{contract.ChecksumAnnotation: currentStamp}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{c}, Volumes: vols}}},
	}
}

func withStamp(d *appsv1.Deployment, stamp string) *appsv1.Deployment {
	d.Spec.Template.Annotations[contract.ChecksumAnnotation] = stamp
	if stamp == "" {
		d.Spec.Template.Annotations = nil
	}
	return d
}

func envFrom(cm string) corev1.Container {
	return corev1.Container{EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}}}
}

// envKey reads one key of configmap/app.
func envKey(key string) corev1.Container {
	return corev1.Container{Env: []corev1.EnvVar{{Name: "V", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "app"}, Key: key}}}}}
}

func volumeItems(cm string, keys ...string) corev1.Volume {
	v := corev1.Volume{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: cm}}}}
	for _, k := range keys {
		v.ConfigMap.Items = append(v.ConfigMap.Items, corev1.KeyToPath{Key: k, Path: k})
	}
	return v
}

func withSecretKey(c corev1.Container, s, key string) corev1.Container {
	c.Env = append(c.Env, corev1.EnvVar{Name: "S", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: s}, Key: key}}})
	return c
}

func deploymentKind(t *testing.T) workload.Kind {
	t.Helper()
	k, ok := workload.Kinds().Of(appsv1.SchemeGroupVersion.WithKind("Deployment"))
	if !ok {
		t.Fatal("no Deployment kind")
	}
	return k
}

// facts builds Facts as Gather would, through readerOf, for the given
// workloads.
func facts(t *testing.T, live *SourceState, next SourceState, others map[hasher.Source]Other, objs ...*appsv1.Deployment) *Facts {
	t.Helper()
	f := &Facts{Namespace: "shop", Source: appCM, Served: served, Live: live, New: next, Others: others}
	if f.Others == nil {
		f.Others = map[hasher.Source]Other{}
	}
	for _, obj := range objs {
		if r, ok := readerOf(deploymentKind(t), obj, appCM); ok {
			f.Readers = append(f.Readers, r)
		}
	}
	return f
}

type rolled struct {
	ref    string
	wave   int
	atOnce bool
	keys   string
}

// computed is Compute's report on f under testKey.
func computed(t *testing.T, f *Facts, maxWaveSize int) *Report {
	t.Helper()
	rep, err := Compute(f, testKey, maxWaveSize)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// expectRolling checks the readers rep rolls, in order.
func expectRolling(t *testing.T, rep *Report, want []rolled) {
	t.Helper()
	if got := rollingOf(rep); !reflect.DeepEqual(got, want) {
		t.Errorf("rolling:\n got %v\nwant %v", got, want)
	}
}

func rollingOf(rep *Report) []rolled {
	var out []rolled
	for _, r := range rep.Rolling {
		out = append(out, rolled{r.Ref, r.Wave, r.AtOnce, describeKeys(r.Keys)})
	}
	return out
}

func whyOf(rep *Report) map[string]Why {
	out := map[string]Why{}
	for _, r := range rep.NotRolling {
		out[r.Ref] = r.Why
	}
	return out
}

func TestComputeReaders(t *testing.T) {
	live := cmState(t, map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"}, nil)
	next := cmState(t, map[string]string{"a": "1", "b": "20", "c": "3", "e": "5"}, nil)
	db := hasher.Source{Kind: hasher.Secret, Name: "db"}
	f := facts(t, &live, next, map[hasher.Source]Other{db: {Found: true, State: secretState(t, map[string]string{"pw": "x"})}},
		deployment("all", nil, envFrom("app")),
		deployment("key-a", nil, envKey("a")),
		deployment("vol-b", nil, corev1.Container{}, volumeItems("app", "b", "c")),
		deployment("key-d", map[string]string{contract.RolloutOrderAnnotation: "-1"}, envKey("d")),
		deployment("at-once", map[string]string{contract.WavesAnnotation: contract.WavesOff}, envKey("e")),
		deployment("with-db", nil, withSecretKey(envKey("b"), "db", "pw")),
		deployment("needs-gone", nil, withSecretKey(envKey("b"), "gone", "pw")),
		deployment("opted-out", map[string]string{contract.InjectionAnnotation: contract.InjectionDisabled}, envFrom("app")),
		deployment("excludes", map[string]string{contract.ExcludeAnnotation: "configmap/app"}, envFrom("app")),
		deployment("other-cm", nil, envFrom("other")),
	)
	f.Others[hasher.Source{Kind: hasher.Secret, Name: "gone"}] = Other{Found: false}
	rep := computed(t, f, 8)
	want := []rolled{
		{"deployment/at-once", 0, true, "added: e"},
		{"deployment/key-d", 1, false, "removed: d"},
		{"deployment/all", 2, false, "changed: b; added: e; removed: d"},
		{"deployment/vol-b", 2, false, "changed: b"},
		{"deployment/with-db", 3, false, "changed: b"},
	}
	expectRolling(t, rep, want)
	wantWhy := map[string]Why{
		"deployment/key-a":      WhyUnchanged,
		"deployment/needs-gone": WhyMissingSource,
		"deployment/opted-out":  WhySkipped,
		"deployment/excludes":   WhyExcluded,
	}
	if got := whyOf(rep); !reflect.DeepEqual(got, wantWhy) {
		t.Errorf("not rolling: got %v, want %v", got, wantWhy)
	}
	if got := describeKeys(rep.ChangedKeys); got != "changed: b; added: e; removed: d" {
		t.Errorf("changed keys %q", got)
	}
	if rep.Waves != 3 || rep.Create || !rep.Served {
		t.Errorf("waves %d, create %v, served %v", rep.Waves, rep.Create, rep.Served)
	}
	// The order of the readers Gather found does not matter, nor the key.
	reversed := *f
	reversed.Readers = nil
	for i := len(f.Readers) - 1; i >= 0; i-- {
		reversed.Readers = append(reversed.Readers, f.Readers[i])
	}
	again, err := Compute(&reversed, bytes.Repeat([]byte{9}, 32), 8)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, rep) {
		t.Errorf("another key or reader order gives another report:\n%+v\n%+v", again, rep)
	}
}

func TestComputeWholeChange(t *testing.T) {
	live := cmState(t, map[string]string{"a": "1"}, nil)
	next := cmState(t, map[string]string{"a": "2"}, nil)
	ignored := cmState(t, map[string]string{"a": "2"}, map[string]string{contract.IgnoreAnnotation: contract.IgnoreTrue})
	ignoredLive := cmState(t, map[string]string{"a": "1"}, map[string]string{contract.IgnoreAnnotation: contract.IgnoreTrue})
	immutable := live
	immutable.Immutable = true
	readers := []*appsv1.Deployment{deployment("one", nil, envFrom("app")), deployment("two", nil, envKey("a"))}
	for name, c := range map[string]struct {
		f    *Facts
		want Why
	}{
		"not served": {func() *Facts {
			f := facts(t, &live, next, nil, readers...)
			f.Served = injection.Decision{Reason: "no"}
			return f
		}(), WhyNotServed},
		"ignored now":  {facts(t, &live, ignored, nil, readers...), WhyIgnored},
		"ignored live": {facts(t, &ignoredLive, next, nil, readers...), WhyIgnored},
		"immutable":    {facts(t, &immutable, next, nil, readers...), WhyImmutable},
	} {
		t.Run(name, func(t *testing.T) {
			rep := computed(t, c.f, 8)
			if len(rep.Rolling) != 0 || len(rep.Notes) == 0 {
				t.Errorf("rolling %v, notes %v; want none rolling and a note", rep.Rolling, rep.Notes)
			}
			if got := whyOf(rep); !reflect.DeepEqual(got, map[string]Why{"deployment/one": c.want, "deployment/two": c.want}) {
				t.Errorf("not rolling %v, want both %s", got, c.want)
			}
		})
	}
}

func TestComputeCreate(t *testing.T) {
	next := cmState(t, map[string]string{"a": "1"}, nil)
	f := facts(t, nil, next, nil,
		deployment("all", nil, envFrom("app")),
		deployment("key-b", nil, envKey("b")))
	rep := computed(t, f, 8)
	want := []rolled{{"deployment/all", 1, false, "added: a"}, {"deployment/key-b", 2, false, "none"}}
	if got := rollingOf(rep); !rep.Create || !reflect.DeepEqual(got, want) {
		t.Errorf("create %v, rolling %v; want %v", rep.Create, got, want)
	}
}

func TestComputeWaves(t *testing.T) {
	live := cmState(t, map[string]string{"a": "1"}, nil)
	next := cmState(t, map[string]string{"a": "2"}, nil)
	var objs []*appsv1.Deployment
	for _, n := range []string{"e", "d", "c", "b", "a"} {
		objs = append(objs, deployment(n, nil, envFrom("app")))
	}
	rep := computed(t, facts(t, &live, next, nil, objs...), 2)
	var got []string
	for _, r := range rep.Rolling {
		got = append(got, r.Name+string(rune('0'+r.Wave)))
	}
	if strings.Join(got, " ") != "a1 b2 c2 d3 e3" || rep.Waves != 3 {
		t.Errorf("waves %v (%d), want a1 b2 c2 d3 e3 (3)", got, rep.Waves)
	}

	// waves=off on the input: every reader at once.
	offNext := cmState(t, map[string]string{"a": "2"}, map[string]string{contract.WavesAnnotation: contract.WavesOff})
	wantAllAtOnce(t, "waves=off", computed(t, facts(t, &live, offNext, nil, objs...), 2), 5)

	// --max-wave-size=0, the hook without waves: every reader at once too.
	wantAllAtOnce(t, "--max-wave-size=0", computed(t, facts(t, &live, next, nil, objs...), 0), 5)
}

// wantAllAtOnce checks that rep rolls n readers, all at once, in no wave.
func wantAllAtOnce(t *testing.T, what string, rep *Report, n int) {
	t.Helper()
	for _, r := range rep.Rolling {
		if !r.AtOnce || r.Wave != 0 {
			t.Errorf("%s: %s: wave %d, at once %v; want at once", what, r.Ref, r.Wave, r.AtOnce)
		}
	}
	if len(rep.Rolling) != n || rep.Waves != 0 {
		t.Errorf("%s: %d rolling in %d waves, want %d at once", what, len(rep.Rolling), rep.Waves, n)
	}
}

// TestRenderNoValues: neither output carries a value, nor a value's
// digest, of the live source or the input.
func TestRenderNoValues(t *testing.T) {
	const liveValue, newValue = "live-value-e5f1", "new-value-9c2d"
	live := cmState(t, map[string]string{"a": liveValue}, nil)
	next := cmState(t, map[string]string{"a": newValue, "b": newValue}, nil)
	rep := computed(t, facts(t, &live, next, nil, deployment("all", nil, envFrom("app")), deployment("key-c", nil, envKey("c"))), 8)
	var table, js bytes.Buffer
	if err := WriteTable(&table, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{table.String(), js.String()} {
		if !strings.Contains(out, "deployment/all") || !strings.Contains(out, "deployment/key-c") {
			t.Errorf("output lacks the readers:\n%s", out)
		}
		for _, v := range []string{liveValue, newValue} {
			d := hasher.DigestOf([]byte(v))
			if strings.Contains(out, v) || strings.Contains(out, hex.EncodeToString(d[:])) || strings.Contains(out, hex.EncodeToString(d[:8])) {
				t.Errorf("output holds %q or its digest:\n%s", v, out)
			}
		}
	}
	t.Logf("table:\n%s", table.String())
}

// TestComputeBinaryData: an env-only reader reads no binaryData (the
// kubelet builds env from data), a volume reads it.
func TestComputeBinaryData(t *testing.T) {
	state := func(a string, z []byte) SourceState {
		st, err := StateOf(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app"}, Data: map[string]string{"a": a},
			BinaryData: map[string][]byte{"z": z}}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	live, next := state("1", []byte{1}), state("2", []byte{2})
	binOnly := state("1", []byte{2})
	objs := []*appsv1.Deployment{deployment("env", nil, envFrom("app")), deployment("vol", nil, corev1.Container{}, volumeItems("app"))}
	rep := computed(t, facts(t, &live, next, nil, objs...), 8)
	want := []rolled{{"deployment/env", 1, false, "changed: a"}, {"deployment/vol", 2, false, "changed: a, z"}}
	if got := rollingOf(rep); !reflect.DeepEqual(got, want) {
		t.Errorf("rolling %v, want %v", got, want)
	}
	rep = computed(t, facts(t, &live, binOnly, nil, objs...), 8)
	if got := rollingOf(rep); !reflect.DeepEqual(got, []rolled{{"deployment/vol", 1, false, "changed: z"}}) ||
		whyOf(rep)["deployment/env"] != WhyUnchanged {
		t.Errorf("binaryData-only change: rolling %v, not rolling %v; want vol only", got, whyOf(rep))
	}
}

// TestComputeUnstamped: a reader whose read keys do not change still rolls
// when it has no stamp, or one of an old format, and the source changes:
// the hook stamps every reader of a changed source afresh.
func TestComputeUnstamped(t *testing.T) {
	live := cmState(t, map[string]string{"a": "1", "b": "1"}, nil)
	next := cmState(t, map[string]string{"a": "2", "b": "1"}, nil)
	objs := []*appsv1.Deployment{
		withStamp(deployment("none", nil, envKey("b")), ""),
		withStamp(deployment("legacy", nil, envKey("b")), "v1:"+strings.Repeat("0", 64)),
		deployment("current", nil, envKey("b")),
	}
	rep := computed(t, facts(t, &live, next, nil, objs...), 8)
	if got := rollingOf(rep); !reflect.DeepEqual(got, []rolled{{"deployment/legacy", 1, false, "none"}, {"deployment/none", 2, false, "none"}}) {
		t.Errorf("rolling %v, want legacy and none", got)
	}
	for _, r := range rep.Rolling {
		if r.Reason == "" {
			t.Errorf("%s rolls with no reason", r.Ref)
		}
	}
	if got := whyOf(rep); !reflect.DeepEqual(got, map[string]Why{"deployment/current": WhyUnchanged}) {
		t.Errorf("not rolling %v", got)
	}
	// Content that does not change brings the hook to no reader.
	rep = computed(t, facts(t, &live, live, nil, objs...), 8)
	if len(rep.Rolling) != 0 {
		t.Errorf("an unchanged source rolls %v", rollingOf(rep))
	}
}

// A reader that starts no pod rolls at once, as the hook has it, and the
// waves are cut from the others: the first reader with pods is wave 1.
func TestComputeReadersThatStartNoPod(t *testing.T) {
	live := cmState(t, map[string]string{"a": "1"}, nil)
	next := cmState(t, map[string]string{"a": "2"}, nil)
	idle := deployment("a-idle", nil, envKey("a"))
	idle.Spec.Replicas = ptr.To[int32](0)
	paused := deployment("b-paused", nil, envKey("a"))
	paused.Spec.Paused = true
	f := facts(t, &live, next, nil, idle, paused, deployment("c-web", nil, envKey("a")), deployment("d-api", nil, envKey("a")))
	rep := computed(t, f, 8)
	want := []rolled{
		{"deployment/a-idle", 0, true, "changed: a"},
		{"deployment/b-paused", 0, true, "changed: a"},
		{"deployment/c-web", 1, false, "changed: a"},
		{"deployment/d-api", 2, false, "changed: a"},
	}
	expectRolling(t, rep, want)
	if rep.Rolling[0].NoPod != "NoReplicas" || rep.Rolling[1].NoPod != "Paused" {
		t.Errorf("noPod = %q, %q; want NoReplicas, Paused", rep.Rolling[0].NoPod, rep.Rolling[1].NoPod)
	}
	var out strings.Builder
	if err := WriteTable(&out, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "at once (NoReplicas)") {
		t.Errorf("the table does not say why a-idle rolls at once:\n%s", out.String())
	}
}

// Readers whose own annotations keep them back when their wave comes: a
// flap hold, only sealed, as the hook honours it. A halt keeps no one: the
// new content supersedes a halt of this source's change, and the reader
// that halted another source's change gets this one all the same.
func TestComputeHeldAndHaltedReaders(t *testing.T) {
	live := cmState(t, map[string]string{"a": "1"}, nil)
	next := cmState(t, map[string]string{"a": "2"}, nil)
	since := time.Date(2026, 12, 1, 20, 0, 0, 0, time.UTC)
	// Preview has no key: a seal is only checked to be there.
	sealed := func(v string) string { return v + " mac=" + strings.Repeat("0", 64) }
	hold := sealed(contract.Hold{Since: since, Level: 1, Quiet: time.Minute}.String())
	unsealedHalt := func(src string) string {
		return contract.Halt{Since: since, Reason: "CrashLoopBackOff", Changes: []contract.Change{{Source: src, Content: "0123456789abcdef"}}}.String()
	}
	haltOf := func(src string) string { return sealed(unsealedHalt(src)) }
	f := facts(t, &live, next, nil,
		deployment("a-held", map[string]string{contract.HoldAnnotation: hold}, envKey("a")),
		deployment("b-halted-other", map[string]string{contract.HaltAnnotation: haltOf("secret/db")}, envKey("a")),
		deployment("c-halted-this", map[string]string{contract.HaltAnnotation: haltOf("configmap/app")}, envKey("a")),
		deployment("d-released", map[string]string{contract.HaltAnnotation: contract.HaltReleased}, envKey("a")),
		deployment("e-bad-hold", map[string]string{contract.HoldAnnotation: sealed("v9 nonsense")}, envKey("a")),
		deployment("f-unsealed-hold", map[string]string{contract.HoldAnnotation: contract.Hold{Since: since, Quiet: time.Minute}.String()}, envKey("a")),
		deployment("g-unsealed-halt", map[string]string{contract.HaltAnnotation: unsealedHalt("secret/db")}, envKey("a")),
		deployment("h-bad-halt", map[string]string{contract.HaltAnnotation: sealed("v9 nonsense")}, envKey("a")))
	rep := computed(t, f, 8)
	waits := map[string]string{}
	for _, r := range rep.Rolling {
		waits[r.Ref] = r.Waits
	}
	for ref, want := range map[string]string{
		"deployment/a-held":         "on a flap hold since 2026-12-01T20:00:00Z (unverified): it rolls once its sources have gone unchanged for 1m0s",
		"deployment/b-halted-other": "",
		"deployment/c-halted-this":  "",
		"deployment/d-released":     "",
		// The hook ignores a hold it cannot read, or did not seal.
		"deployment/e-bad-hold":      "",
		"deployment/f-unsealed-hold": "",
		// Nor does it honour a halt it cannot read, or did not seal.
		"deployment/g-unsealed-halt": "",
		"deployment/h-bad-halt":      "",
	} {
		got, ok := waits[ref]
		if !ok {
			t.Errorf("%s does not roll: %v", ref, whyOf(rep))
		}
		if got != want {
			t.Errorf("%s waits %q, want %q", ref, got, want)
		}
	}
	var out strings.Builder
	if err := WriteTable(&out, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "waits: on a flap hold") || strings.Contains(out.String(), "0123456789abcdef") {
		t.Errorf("the table does not say who waits, or names a change's digest:\n%s", out.String())
	}
}
