package sources

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/workload"
)

// readingSpec reads configmap/app (envFrom), configmap/files (volume) and
// secret/db (env).
func readingSpec() corev1.PodSpec {
	return corev1.PodSpec{
		Containers: []corev1.Container{{
			Name: "app",
			EnvFrom: []corev1.EnvFromSource{{
				ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "app"}},
			}},
			Env: []corev1.EnvVar{{
				Name: "PASSWORD",
				ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "db"}, Key: "password",
				}},
			}},
		}},
		Volumes: []corev1.Volume{{
			Name: "files",
			VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: "files"},
			}},
		}},
	}
}

func deploymentReading(annotations map[string]string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Annotations: annotations}}
	d.Spec.Template.Spec = readingSpec()
	return d
}

func TestIndexKey(t *testing.T) {
	tests := map[string]struct {
		src  hasher.Source
		want string
	}{
		"configmap": {src: hasher.Source{Kind: hasher.ConfigMap, Name: "app"}, want: "configmap/app"},
		"secret":    {src: hasher.Source{Kind: hasher.Secret, Name: "db.creds"}, want: "secret/db.creds"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := IndexKey(tc.src); got != tc.want {
				t.Errorf("IndexKey(%v) = %q, want %q", tc.src, got, tc.want)
			}
		})
	}
}

// readKeys indexes obj as the hook does: with ReadKeysOf of its kind in the
// registry. An object of no kind there is read by none of them.
func readKeys(t *testing.T, obj client.Object) []string {
	t.Helper()
	k, ok := workload.Kinds().For(obj)
	if ok {
		return ReadKeysOf(k)(obj)
	}
	for _, k := range workload.Kinds() {
		if got := ReadKeysOf(k)(obj); got != nil {
			t.Errorf("ReadKeysOf(%s) indexes a %T: %q", k.Name(), obj, got)
		}
	}
	return nil
}

func TestReadKeysOf(t *testing.T) {
	all := []string{"configmap/app", "configmap/files", "secret/db"}
	cronJob := &batchv1.CronJob{ObjectMeta: metav1.ObjectMeta{Name: "cj", Namespace: "ns"}}
	cronJob.Spec.JobTemplate.Spec.Template.Spec = readingSpec()
	sts := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "sts", Namespace: "ns"}}
	sts.Spec.Template.Spec = readingSpec()
	// The workload's own annotations govern, not the template's.
	templateOptOut := deploymentReading(nil)
	templateOptOut.Spec.Template.Annotations = map[string]string{contract.InjectionAnnotation: contract.InjectionDisabled}

	tests := map[string]struct {
		obj  client.Object
		want []string // nil means ReadKeysOf must return nil
	}{
		"deployment": {
			obj:  deploymentReading(nil),
			want: all,
		},
		"statefulset": {
			obj:  sts,
			want: all,
		},
		"cronjob reads through its job template": {
			obj:  cronJob,
			want: all,
		},
		"pod": {
			obj:  &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}, Spec: readingSpec()},
			want: all,
		},
		"include and exclude annotations": {
			obj: deploymentReading(map[string]string{
				contract.IncludeAnnotation: "secret/extra, configmap/more",
				contract.ExcludeAnnotation: "configmap/files",
			}),
			want: []string{"configmap/app", "configmap/more", "secret/db", "secret/extra"},
		},
		"malformed include entries are ignored": {
			obj: deploymentReading(map[string]string{
				contract.IncludeAnnotation: "nonsense, configmap/Not_A_Name, configmap/ok",
			}),
			want: []string{"configmap/app", "configmap/files", "configmap/ok", "secret/db"},
		},
		"no reads": {
			obj:  &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "ns"}},
			want: []string{},
		},
		"template-level opt-out does not count": {
			obj:  templateOptOut,
			want: all,
		},
		"opted out": {
			obj: deploymentReading(map[string]string{contract.InjectionAnnotation: contract.InjectionDisabled}),
		},
		"configmap is not a workload": {
			obj: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app", Namespace: "ns"}},
		},
		"replicaset is not a workload": {
			obj: &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "ns"},
				Spec: appsv1.ReplicaSetSpec{Template: corev1.PodTemplateSpec{Spec: readingSpec()}}},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := readKeys(t, tc.obj)
			if tc.want == nil {
				if got != nil {
					t.Fatalf("ReadKeysOf = %q, want nil", got)
				}
				return
			}
			got = slices.Clone(got)
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("ReadKeysOf = %q, want %q", got, tc.want)
			}
		})
	}
}
