//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/cmd/confighash/app"
	"github.com/confighash/confighash/e2e/framework"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/preview"
)

// The values of the preview spec: each is distinctive, so that finding one
// in the output means a value was printed.
var previewValues = map[string]string{
	"a": "e2e-preview-live-a", "b": "e2e-preview-live-b", "c": "e2e-preview-live-c", "d": "e2e-preview-live-d",
}

const (
	previewSecretValue = "e2e-preview-live-secret"
	previewNewA        = "e2e-preview-new-a"
	previewNewB        = "e2e-preview-new-b"
	previewNewE        = "e2e-preview-new-e"
)

func envKeyOf(cm, key string) corev1.EnvVar {
	return corev1.EnvVar{Name: strings.ToUpper(key), ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: cm}, Key: key}}}
}

func previewContainer(c corev1.Container) corev1.PodSpec {
	c.Name, c.Image = "app", "registry.k8s.io/pause:3.10"
	return corev1.PodSpec{Containers: []corev1.Container{c}}
}

// TestPreviewListsReadersWhoseKeysChange: a ConfigMap read by four
// Deployments (the whole of it through envFrom; key b through valueFrom,
// with a Secret; key c through a volume with items; key d through
// valueFrom) and by one opted out. The changed copy changes a and b and
// adds e: exactly the envFrom reader and the reader of b roll, in the
// waves their rollout-order gives; nothing is written; no value is
// printed.
func TestPreviewListsReadersWhoseKeysChange(t *testing.T) {
	ns := env.NewNamespace(t, true)
	cm := configMap(ns, "shared", previewValues)
	env.Create(t, cm)
	sec := secret(ns, "creds", map[string]string{"token": previewSecretValue})
	env.Create(t, sec)
	whole := deploymentOf(ns, "whole", previewContainer(corev1.Container{EnvFrom: []corev1.EnvFromSource{{
		ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "shared"}}}}}))
	keyB := deploymentOf(ns, "key-b", previewContainer(corev1.Container{Env: []corev1.EnvVar{envKeyOf("shared", "b"),
		{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "creds"}, Key: "token"}}}}}))
	keyB.Annotations = map[string]string{contract.RolloutOrderAnnotation: "-1"}
	volC := deploymentOf(ns, "vol-c", previewContainer(corev1.Container{VolumeMounts: []corev1.VolumeMount{{Name: "cfg", MountPath: "/cfg"}}}))
	volC.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: "cfg", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
		LocalObjectReference: corev1.LocalObjectReference{Name: "shared"}, Items: []corev1.KeyToPath{{Key: "c", Path: "c"}}}}}}
	keyD := deploymentOf(ns, "key-d", previewContainer(corev1.Container{Env: []corev1.EnvVar{envKeyOf("shared", "d")}}))
	optedOut := deploymentOf(ns, "opted-out", previewContainer(corev1.Container{EnvFrom: []corev1.EnvFromSource{{
		ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "shared"}}}}}))
	optedOut.Annotations = map[string]string{contract.InjectionAnnotation: contract.InjectionDisabled}
	objs := []client.Object{cm, sec, whole, keyB, volC, keyD, optedOut}
	for _, o := range objs[2:] {
		env.Create(t, o)
	}

	changed := map[string]string{"a": previewNewA, "b": previewNewB, "c": previewValues["c"], "d": previewValues["d"], "e": previewNewE}
	file := filepath.Join(t.TempDir(), "shared.yaml")
	text := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n  namespace: " + ns + "\ndata:\n"
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		text += "  " + k + ": " + changed[k] + "\n"
	}
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}

	before := settledVersions(t, objs)
	// The waves are the point here, and this confighash publishes
	// --max-wave-size=0 (framework/local.go): the flag overrides it.
	args := []string{"--kubeconfig", env.Kubeconfig, "--namespace-of-confighash", framework.Namespace, "--max-wave-size=16"}

	var stdout, stderr bytes.Buffer
	err := app.Run(env.SpecContext(t), append([]string{"preview", "-f", file}, args...), &stdout, &stderr)
	t.Logf("confighash preview -f %s: %v\n%s%s", file, err, stdout.String(), stderr.String())
	if err != nil {
		t.Fatalf("preview: %v", err)
	}
	table := stdout.String() + stderr.String()
	for _, want := range []string{"deployment/whole", "deployment/key-b", "deployment/vol-c", "deployment/key-d", "deployment/opted-out", "changed: a, b; added: e"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q", want)
		}
	}

	// The same, as JSON, from stdin (the object names its namespace; -n
	// agrees).
	stdout.Reset()
	stderr.Reset()
	err = app.Preview(env.SpecContext(t), append([]string{"-f", "-", "-o", "json", "-n", ns}, args...), strings.NewReader(text), &stdout, &stderr)
	if err != nil {
		t.Fatalf("preview -f - -o json: %v\n%s", err, stderr.String())
	}
	var rep preview.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("decoding the json: %v\n%s", err, stdout.String())
	}
	type roll struct {
		Ref  string
		Wave int
		Keys []preview.KeyChange
	}
	var rolling []roll
	for _, r := range rep.Rolling {
		rolling = append(rolling, roll{r.Ref, r.Wave, r.Keys})
	}
	wantRolling := []roll{
		{"deployment/key-b", 1, []preview.KeyChange{{Key: "b", Change: preview.Changed}}},
		{"deployment/whole", 2, []preview.KeyChange{{Key: "a", Change: preview.Changed}, {Key: "b", Change: preview.Changed}, {Key: "e", Change: preview.Added}}},
	}
	if !reflect.DeepEqual(rolling, wantRolling) {
		t.Errorf("rolling:\n got %+v\nwant %+v", rolling, wantRolling)
	}
	notRolling := map[string]preview.Why{}
	for _, r := range rep.NotRolling {
		notRolling[r.Ref] = r.Why
	}
	wantNot := map[string]preview.Why{"deployment/vol-c": preview.WhyUnchanged, "deployment/key-d": preview.WhyUnchanged, "deployment/opted-out": preview.WhySkipped}
	if !reflect.DeepEqual(notRolling, wantNot) {
		t.Errorf("not rolling: got %v, want %v", notRolling, wantNot)
	}
	if !rep.Served || rep.Create || rep.Waves != 2 || rep.Namespace != ns {
		t.Errorf("served %v, create %v, waves %d, namespace %s; want served, an update, 2 waves, %s", rep.Served, rep.Create, rep.Waves, rep.Namespace, ns)
	}

	out := table + stdout.String() + stderr.String()
	for _, v := range append([]string{previewSecretValue, previewNewA, previewNewB, previewNewE}, mapValues(previewValues)...) {
		if strings.Contains(out, v) {
			t.Errorf("the output holds the value %q", v)
		}
	}
	if after := versions(t, objs); !reflect.DeepEqual(after, before) {
		t.Errorf("preview wrote: resourceVersions went from %v to %v", before, after)
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

// versions reads the resourceVersion of each object.
func versions(t *testing.T, objs []client.Object) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, o := range objs {
		var fresh client.Object
		switch o.(type) {
		case *corev1.ConfigMap:
			fresh = &corev1.ConfigMap{}
		case *corev1.Secret:
			fresh = &corev1.Secret{}
		default:
			fresh = &appsv1.Deployment{}
		}
		if err := env.Client.Get(env.SpecContext(t), client.ObjectKeyFromObject(o), fresh); err != nil {
			t.Fatalf("reading %s: %v", o.GetName(), err)
		}
		out[fresh.GetName()] = fresh.GetResourceVersion()
	}
	return out
}

// settledVersions waits until the controllers are done with the objects
// (the Deployments' status, the hook's re-check): their resourceVersions
// hold for two seconds.
func settledVersions(t *testing.T, objs []client.Object) map[string]string {
	t.Helper()
	last := versions(t, objs)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		time.Sleep(2 * time.Second)
		now := versions(t, objs)
		if reflect.DeepEqual(now, last) {
			return now
		}
		last = now
	}
	t.Fatalf("the objects did not settle: %v", last)
	return nil
}

// TestPreviewNotServedCreate: a Secret that does not exist yet, given with
// stringData on stdin, in a namespace confighash does not serve: the change
// is a create, its reader is listed, and nothing rolls there.
func TestPreviewNotServedCreate(t *testing.T) {
	ns := env.NewNamespace(t, false)
	env.Create(t, deploymentOf(ns, "web", previewContainer(corev1.Container{Env: []corev1.EnvVar{{Name: "TOKEN",
		ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: "fresh"}, Key: "token"}}}}})))
	text := `{"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "fresh"}, "stringData": {"token": "e2e-preview-string-data"}}`
	var stdout, stderr bytes.Buffer
	err := app.Preview(env.SpecContext(t), []string{"-f", "-", "-o", "json", "-n", ns, "--kubeconfig", env.Kubeconfig,
		"--namespace-of-confighash", framework.Namespace}, strings.NewReader(text), &stdout, &stderr)
	if err != nil {
		t.Fatalf("preview: %v\n%s", err, stderr.String())
	}
	var rep preview.Report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("decoding the json: %v\n%s", err, stdout.String())
	}
	if rep.Served || !rep.Create || len(rep.Rolling) != 0 || len(rep.NotRolling) != 1 ||
		rep.NotRolling[0].Ref != "deployment/web" || rep.NotRolling[0].Why != preview.WhyNotServed {
		t.Errorf("want a create in a namespace not served, deployment/web not rolling for it; got\n%s", stdout.String())
	}
	if got := rep.ChangedKeys; len(got) != 1 || got[0] != (preview.KeyChange{Key: "token", Change: preview.Added}) {
		t.Errorf("changed keys %v, want token added", got)
	}
	if strings.Contains(stdout.String()+stderr.String(), "e2e-preview-string-data") {
		t.Errorf("the output holds the value:\n%s", stdout.String())
	}
}
