package hasher

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/confighash/confighash/internal/contract"
)

// benchPodSpec is a realistic template: an init container, an app, two
// sidecars, and volumes; about twenty ConfigMap and Secret reads in all,
// several of them of the same sources.
func benchPodSpec() *corev1.PodSpec {
	return &corev1.PodSpec{
		ImagePullSecrets: []corev1.LocalObjectReference{{Name: "registry"}},
		InitContainers: []corev1.Container{{
			Name:    "migrate",
			Env:     []corev1.EnvVar{envSecret("db", "dsn", nil), envCM("app", "db.schema", nil)},
			EnvFrom: []corev1.EnvFromSource{envFromCM("migrate")},
		}},
		Containers: []corev1.Container{
			{
				Name: "app",
				Env: []corev1.EnvVar{
					{Name: "MODE", Value: "prod"},
					envCM("app", "log.level", nil),
					envCM("app", "listen.addr", nil),
					envCM("features", "beta", new(true)),
					envSecret("db", "username", nil),
					envSecret("db", "password", nil),
					envSecret("api-keys", "stripe", nil),
					envSecret("api-keys", "sendgrid", nil),
				},
				EnvFrom: []corev1.EnvFromSource{envFromCM("app-env"), envFromSecret("app-env", new(true))},
			},
			{
				Name:    "proxy",
				Env:     []corev1.EnvVar{envCM("proxy", "upstream", nil)},
				EnvFrom: []corev1.EnvFromSource{envFromSecret("proxy-auth", nil)},
			},
			{
				Name: "metrics",
				Env:  []corev1.EnvVar{envCM("metrics", "scrape.interval", nil), envSecret("metrics", "token", new(true))},
			},
		},
		Volumes: []corev1.Volume{
			volCM("app", nil, "app.yaml", "logging.yaml"),
			volSecret("tls"),
			volCM("proxy", nil),
			projected(
				corev1.VolumeProjection{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
				projCM("ca-bundle", "ca.crt"),
				projSecret("client-cert", "tls.crt", "tls.key"),
			),
		},
	}
}

func BenchmarkReferences(b *testing.B) {
	spec := benchPodSpec()
	annotations := map[string]string{contract.IncludeAnnotation: "configmap/extra", contract.ExcludeAnnotation: "secret/proxy-auth"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := References(spec, annotations); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkChecksum hashes ten whole-object sources of twenty keys each.
func BenchmarkChecksum(b *testing.B) {
	const sources, keys = 10, 20
	objects := make(map[Source]Content, sources)
	refs := make([]Reference, 0, sources)
	for i := range sources {
		src := Source{ConfigMap, fmt.Sprintf("config-%02d", i)}
		c := Content{Data: make(map[string]Digest, keys)}
		for k := range keys {
			c.Data[fmt.Sprintf("key-%02d.yaml", k)] = DigestOf(fmt.Appendf(nil, "value %d/%d", i, k))
		}
		objects[src] = c
		refs = append(refs, Reference{Source: src, AllKeys: true})
	}
	lookup := lookupFrom(objects)
	key := []byte(testKey)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Checksum(key, "ns", refs, lookup); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStoredBeforeIgnoreToggle is the check the hook makes on a
// differing stamp, for a workload reading 256 ConfigMaps of 1,000 keys
// (issue 13 §2), with a stamp that no toggle explains, so every source is
// tried. "one checksum per source" is the first version, which looked up
// and hashed every source again for each source tried; the others are the
// current one, unbounded, bounded as the hook bounds it, and with the
// toggled source known.
func BenchmarkStoredBeforeIgnoreToggle(b *testing.B) {
	const sources, keys = 256, 1000
	key := []byte(testKey)
	objects, refs := toggleFixture(sources, keys)
	lookup := lookupFrom(objects)
	unexplained := stampFlipped(b, key, refs, objects, Source{ConfigMap, "nothing"})
	toggled := Source{ConfigMap, "config-0200"}
	b.Run("one checksum per source", func(b *testing.B) {
		for b.Loop() {
			for _, ref := range canonical(refs) {
				if _, found, _ := lookup(ref.Source); !found {
					continue
				}
				if stampFlipped(b, key, refs, objects, ref.Source) == unexplained {
					b.Fatal("matched")
				}
			}
		}
	})
	run := func(name, stored string, check ToggleCheck) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			var res ToggleResult
			for b.Loop() {
				var err error
				if res, err = StoredBeforeIgnoreToggle(key, "ns", refs, lookup, stored, check); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Tried), "tries/op")
		})
	}
	run("unbounded", unexplained, ToggleCheck{})
	run("bounded 32MiB", unexplained, ToggleCheck{MaxBytes: 32 << 20}) // restamp.maxToggleBytes
	run("toggle known", stampFlipped(b, key, refs, objects, toggled), ToggleCheck{Toggled: func(s Source) bool { return s == toggled }, MaxBytes: 32 << 20})
}
