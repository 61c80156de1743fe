//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/confighash/confighash/hasher"
	"github.com/confighash/confighash/internal/sources"
)

const (
	// bulkySources of bulkyAnnotationBytes of annotations each is issue
	// 26's shape: what took one admission's LIST to 566-804 MiB of heap.
	bulkySources         = 500
	bulkyAnnotationBytes = 250 << 10
	// bulkyReaders are created one after another, each reading its own
	// source, spread over the whole list (the first few within one
	// LIST's byte budget, the rest past it).
	bulkyReaders = 20
	// bulkyGrowth is issue 26's bar for the peak RSS they may add.
	bulkyGrowth = 64.0 // MiB
)

func bulkyConfigMap(ns string, i int) *corev1.ConfigMap {
	c := configMap(ns, fmt.Sprintf("bulky-%03d", i), map[string]string{"v": fmt.Sprint(i)})
	c.Annotations = map[string]string{"tenant.example/blob": strings.Repeat("a", bulkyAnnotationBytes)}
	return c
}

// TestBulkyAnnotationsInAServedNamespace holds issue 26's bar: with 500
// ConfigMaps of 250 KiB of annotations each in a served namespace, 20
// Deployment creates there, each reading one of them, are all stamped, and
// confighash's peak RSS grows by less than 64 MiB while they are admitted.
func TestBulkyAnnotationsInAServedNamespace(t *testing.T) {
	if env.ConfighashPID() == 0 {
		t.Skip("reads the local confighash process's memory")
	}
	// A fresh process, so the baseline is not what an earlier spec left.
	restartConfighash(t)
	ns := env.NewNamespace(t, true)
	// Gone before the next spec starts: the control plane's work of deleting
	// these bulky objects made the specs after this one miss their waits.
	deleteWhenDone(t, env.Client, []client.Object{&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}})
	start := settledRSS(t)
	resetPeakRSS(t)

	objs := make([]client.Object, bulkySources)
	for i := range objs {
		objs[i] = bulkyConfigMap(ns, i)
	}
	began := time.Now()
	createConcurrently(t, env.Client, 16, objs)
	created := time.Since(began)
	readerOf := func(i int) corev1.PodSpec {
		return corev1.PodSpec{Containers: []corev1.Container{{
			Name: "app", Image: "registry.k8s.io/pause:3.10",
			EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: objs[i].GetName()}}}},
		}}}
	}
	// The informer has them all once the last one written is cached.
	dryRunUntilCached(t, ns, readerOf(bulkySources-1))
	sourcesPeak := peakMiB(t)

	// The apiserver answers the LIST Versions sends, metadata only, and it
	// finds the first source current.
	hc, err := rest.HTTPClientFor(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	pages, err := sources.NewRESTPages(env.Config, hc)
	if err != nil {
		t.Fatal(err)
	}
	first := &corev1.ConfigMap{}
	if err := env.Client.Get(env.SpecContext(t), client.ObjectKeyFromObject(objs[0]), first); err != nil {
		t.Fatal(err)
	}
	v := sources.NewVersions(pages, time.Minute, sources.DefaultRecentWeight, nil)
	if !v.Current(env.SpecContext(t), ns, hasher.Source{Kind: hasher.ConfigMap, Name: first.Name}, first) {
		t.Errorf("Versions' LIST of %s does not find %s at its version %s", ns, first.Name, first.ResourceVersion)
	}

	// Past the TTL of any list taken so far, so the creates list again.
	time.Sleep(2 * sources.DefaultMissTTL)
	before := settledRSS(t)
	resetPeakRSS(t)
	reads := readGetLatency(t)
	began = time.Now()
	for i := range bulkyReaders {
		spec := readerOf(i * bulkySources / bulkyReaders)
		d := deploymentOf(ns, fmt.Sprintf("reader-%02d", i), spec)
		d.Spec.Replicas = ptr.To[int32](0)
		env.Create(t, d)
		if got, want := env.StampOf(t, d), expectedChecksum(t, ns, &spec, nil); got != want {
			t.Errorf("%s, reading %s: stamp %q, want %q", d.Name, spec.Containers[0].EnvFrom[0].ConfigMapRef.Name, got, want)
		}
	}
	admitted := time.Since(began)
	reads = readGetLatency(t).minus(reads)
	peak := peakMiB(t)
	t.Logf("%d ConfigMaps × %d KiB of annotations, created in %s: RSS %.1f MiB before, peak %.1f MiB while they were cached (+%.1f MiB)",
		bulkySources, bulkyAnnotationBytes>>10, created.Round(time.Millisecond), start, sourcesPeak, sourcesPeak-start)
	t.Logf("%d creates reading them, in %s: RSS %.1f MiB before, peak %.1f MiB (+%.1f MiB; bar < %.0f MiB); %s (the GETs include this spec's own, one per create)",
		bulkyReaders, admitted.Round(time.Millisecond), before, peak, peak-before, bulkyGrowth, reads)
	if peak-before >= bulkyGrowth {
		t.Errorf("peak RSS grew by %.1f MiB (%.1f → %.1f) during the creates, want < %.0f MiB", peak-before, before, peak, bulkyGrowth)
	}
}
