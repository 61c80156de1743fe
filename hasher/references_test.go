package hasher

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/internal/contract"
)

func TestReferences(t *testing.T) {
	tests := map[string]struct {
		spec        corev1.PodSpec
		annotations map[string]string
		want        []Reference
		wantErrs    []string // substrings, one per reported entry
	}{
		"empty spec": {},
		"env configMapKeyRef": {
			spec: corev1.PodSpec{Containers: []corev1.Container{{Env: []corev1.EnvVar{envCM("app", "level", nil)}}}},
			want: []Reference{envOnly(keyed(ConfigMap, "app", "level"))},
		},
		"env secretKeyRef": {
			spec: corev1.PodSpec{Containers: []corev1.Container{{Env: []corev1.EnvVar{envSecret("db", "password", nil)}}}},
			want: []Reference{keyed(Secret, "db", "password")},
		},
		"env literal and fieldRef ignored": {
			spec: corev1.PodSpec{Containers: []corev1.Container{{Env: []corev1.EnvVar{
				{Name: "A", Value: "x"},
				{Name: "B", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
			}}}},
		},
		"envFrom configMapRef": {
			spec: corev1.PodSpec{Containers: []corev1.Container{{EnvFrom: []corev1.EnvFromSource{envFromCM("app")}}}},
			want: []Reference{envOnly(whole(ConfigMap, "app"))},
		},
		"envFrom secretRef": {
			spec: corev1.PodSpec{Containers: []corev1.Container{{EnvFrom: []corev1.EnvFromSource{envFromSecret("db", nil)}}}},
			want: []Reference{whole(Secret, "db")},
		},
		"configMap volume whole": {
			spec: corev1.PodSpec{Volumes: []corev1.Volume{volCM("app", nil)}},
			want: []Reference{whole(ConfigMap, "app")},
		},
		"configMap volume items": {
			spec: corev1.PodSpec{Volumes: []corev1.Volume{volCM("app", nil, "b.yaml", "a.yaml")}},
			want: []Reference{keyed(ConfigMap, "app", "a.yaml", "b.yaml")},
		},
		"secret volume whole": {
			spec: corev1.PodSpec{Volumes: []corev1.Volume{volSecret("tls")}},
			want: []Reference{whole(Secret, "tls")},
		},
		"secret volume items": {
			spec: corev1.PodSpec{Volumes: []corev1.Volume{volSecret("tls", "tls.key", "tls.crt")}},
			want: []Reference{keyed(Secret, "tls", "tls.crt", "tls.key")},
		},
		"projected whole": {
			spec: corev1.PodSpec{Volumes: []corev1.Volume{projected(projCM("app"), projSecret("db"))}},
			want: []Reference{whole(ConfigMap, "app"), whole(Secret, "db")},
		},
		"projected items": {
			spec: corev1.PodSpec{Volumes: []corev1.Volume{projected(projCM("app", "x"), projSecret("db", "user", "pass"))}},
			want: []Reference{keyed(ConfigMap, "app", "x"), keyed(Secret, "db", "pass", "user")},
		},
		"init containers": {
			spec: corev1.PodSpec{InitContainers: []corev1.Container{{
				Env:     []corev1.EnvVar{envSecret("migrate", "dsn", nil)},
				EnvFrom: []corev1.EnvFromSource{envFromCM("init")},
			}}},
			want: []Reference{envOnly(whole(ConfigMap, "init")), keyed(Secret, "migrate", "dsn")},
		},
		"keys union across containers and volumes": {
			spec: corev1.PodSpec{
				Containers: []corev1.Container{
					{Env: []corev1.EnvVar{envCM("app", "b", nil), envCM("app", "a", nil)}},
					{Env: []corev1.EnvVar{envCM("app", "a", nil)}},
				},
				Volumes: []corev1.Volume{volCM("app", nil, "c")},
			},
			want: []Reference{keyed(ConfigMap, "app", "a", "b", "c")},
		},
		// The kubelet builds env from a ConfigMap's data alone; a volume
		// or projection writes binaryData too.
		"env reads of a ConfigMap only are env-only": {
			spec: corev1.PodSpec{Containers: []corev1.Container{
				{Env: []corev1.EnvVar{envCM("app", "a", nil)}},
				{EnvFrom: []corev1.EnvFromSource{envFromCM("app")}},
			}},
			want: []Reference{envOnly(whole(ConfigMap, "app"))},
		},
		"a projection of a ConfigMap env reads too is not env-only": {
			spec: corev1.PodSpec{
				Containers: []corev1.Container{{EnvFrom: []corev1.EnvFromSource{envFromCM("app")}}},
				Volumes:    []corev1.Volume{projected(projCM("app", "x"))},
			},
			want: []Reference{whole(ConfigMap, "app")},
		},
		"an included ConfigMap env reads is not env-only": {
			spec:        corev1.PodSpec{Containers: []corev1.Container{{Env: []corev1.EnvVar{envCM("app", "a", nil)}}}},
			annotations: map[string]string{contract.IncludeAnnotation: "configmap/app"},
			want:        []Reference{whole(ConfigMap, "app")},
		},
		"whole wins over keys": {
			spec: corev1.PodSpec{
				Containers: []corev1.Container{{
					Env:     []corev1.EnvVar{envSecret("db", "user", nil)},
					EnvFrom: []corev1.EnvFromSource{envFromSecret("db", nil)},
				}},
				Volumes: []corev1.Volume{volSecret("db", "pass")},
			},
			want: []Reference{whole(Secret, "db")},
		},
		"all reads optional": {
			spec: corev1.PodSpec{
				Containers: []corev1.Container{{Env: []corev1.EnvVar{envCM("app", "a", new(true))}}},
				Volumes:    []corev1.Volume{volCM("app", new(true), "b")},
			},
			want: []Reference{optional(keyed(ConfigMap, "app", "a", "b"))},
		},
		"one required read makes it required": {
			spec: corev1.PodSpec{
				Containers: []corev1.Container{{EnvFrom: []corev1.EnvFromSource{envFromSecret("db", new(true))}}},
				Volumes:    []corev1.Volume{projected(projSecret("db", "x"))},
			},
			want: []Reference{whole(Secret, "db")},
		},
		"optional false is required": {
			spec: corev1.PodSpec{Volumes: []corev1.Volume{volCM("app", new(false))}},
			want: []Reference{whole(ConfigMap, "app")},
		},
		"same name different kinds stay apart": {
			spec: corev1.PodSpec{Containers: []corev1.Container{{EnvFrom: []corev1.EnvFromSource{
				envFromSecret("app", nil), envFromCM("app"),
			}}}},
			want: []Reference{envOnly(whole(ConfigMap, "app")), whole(Secret, "app")},
		},
		"imagePullSecrets and non-config projections ignored": {
			spec: corev1.PodSpec{
				ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}},
				Volumes: []corev1.Volume{
					projected(
						corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
						corev1.VolumeProjection{DownwardAPI: &corev1.DownwardAPIProjection{}},
						corev1.VolumeProjection{ClusterTrustBundle: &corev1.ClusterTrustBundleProjection{Name: new("bundle"), Path: "ca"}},
					),
					{Name: "csi", VolumeSource: corev1.VolumeSource{CSI: &corev1.CSIVolumeSource{
						Driver: "d", NodePublishSecretRef: &corev1.LocalObjectReference{Name: "csi-creds"},
					}}},
				},
			},
		},
		"kube-root-ca.crt beside a token is the token bundle, not config": {
			spec: corev1.PodSpec{Volumes: []corev1.Volume{projected(
				corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
				projCM("kube-root-ca.crt", "ca.crt"),
			)}},
		},
		"kube-root-ca.crt read on its own is config": {
			spec: corev1.PodSpec{Volumes: []corev1.Volume{projected(projCM("kube-root-ca.crt", "ca.crt"))}},
			want: []Reference{keyed(ConfigMap, "kube-root-ca.crt", "ca.crt")},
		},
		"empty names skipped": {
			spec: corev1.PodSpec{
				Containers: []corev1.Container{{Env: []corev1.EnvVar{envCM("", "a", nil)}, EnvFrom: []corev1.EnvFromSource{envFromSecret("", nil)}}},
				Volumes:    []corev1.Volume{volSecret("")},
			},
		},
		"include adds whole and optional": {
			spec:        corev1.PodSpec{Containers: []corev1.Container{{Env: []corev1.EnvVar{envCM("app", "a", new(true))}}}},
			annotations: map[string]string{contract.IncludeAnnotation: "configmap/app, Secret/extra"},
			want:        []Reference{optional(whole(ConfigMap, "app")), optional(whole(Secret, "extra"))},
		},
		"include keeps the spec's requirement": {
			spec:        corev1.PodSpec{Volumes: []corev1.Volume{volSecret("db", "pass")}},
			annotations: map[string]string{contract.IncludeAnnotation: "secret/db"},
			want:        []Reference{whole(Secret, "db")},
		},
		"include skips empty entries": {
			annotations: map[string]string{contract.IncludeAnnotation: " ,secret/a,, "},
			want:        []Reference{optional(whole(Secret, "a"))},
		},
		"malformed include entries are ignored with a warning": {
			spec:        corev1.PodSpec{Volumes: []corev1.Volume{volCM("app", nil)}},
			annotations: map[string]string{contract.IncludeAnnotation: "configmap/, foo/bar, configmap/ns/name, secret/missing"},
			want:        []Reference{whole(ConfigMap, "app"), optional(whole(Secret, "missing"))},
			wantErrs: []string{
				`invalid source "configmap/": missing name`,
				`invalid source "foo/bar": unknown kind "foo"`,
				`invalid source "configmap/ns/name": invalid name "ns/name"`,
			},
		},
		"exclude drops spec reads": {
			spec: corev1.PodSpec{Containers: []corev1.Container{{
				Env:     []corev1.EnvVar{envCM("app", "a", nil)},
				EnvFrom: []corev1.EnvFromSource{envFromSecret("db", nil)},
			}}},
			annotations: map[string]string{contract.ExcludeAnnotation: "secret/db"},
			want:        []Reference{envOnly(keyed(ConfigMap, "app", "a"))},
		},
		"exclude beats include": {
			annotations: map[string]string{contract.IncludeAnnotation: "configmap/a,configmap/b", contract.ExcludeAnnotation: "configmap/a"},
			want:        []Reference{optional(whole(ConfigMap, "b"))},
		},
		"exclude everything": {
			spec:        corev1.PodSpec{Volumes: []corev1.Volume{volCM("app", nil)}},
			annotations: map[string]string{contract.ExcludeAnnotation: "configmap/app"},
		},
		"malformed entries reported, others kept": {
			spec: corev1.PodSpec{Volumes: []corev1.Volume{volCM("app", nil), volSecret("db")}},
			annotations: map[string]string{
				contract.IncludeAnnotation: "configmap/extra, deployment/web, secret/Bad_Name",
				contract.ExcludeAnnotation: "nonsense, secret/db",
			},
			want: []Reference{whole(ConfigMap, "app"), optional(whole(ConfigMap, "extra"))},
			wantErrs: []string{
				`annotation confighash.dev/include: ignoring entry: invalid source "deployment/web": unknown kind "deployment"`,
				`annotation confighash.dev/include: ignoring entry: invalid source "secret/Bad_Name": invalid name "Bad_Name"`,
				`annotation confighash.dev/exclude: ignoring entry: invalid source "nonsense"`,
			},
		},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := References(&tt.spec, tt.annotations)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("References() =\n  %+v\nwant\n  %+v", got, tt.want)
			}
			checkJoinedErrors(t, err, tt.wantErrs)
		})
	}
}

// checkJoinedErrors checks that err joins exactly one error per wanted
// substring, in order.
func checkJoinedErrors(t *testing.T, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Errorf("unexpected error: %v", err)
		}
		return
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		t.Fatalf("error = %v, want errors.Join of %d errors", err, len(want))
	}
	errs := joined.Unwrap()
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%v", len(errs), len(want), err)
	}
	for i, e := range errs {
		if !strings.Contains(e.Error(), want[i]) {
			t.Errorf("error %d = %q, want containing %q", i, e, want[i])
		}
	}
}

func TestReferencesNilSpec(t *testing.T) {
	got, err := References(nil, map[string]string{contract.IncludeAnnotation: "secret/a"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []Reference{optional(whole(Secret, "a"))}; !reflect.DeepEqual(got, want) {
		t.Errorf("References(nil) = %+v, want %+v", got, want)
	}
}
