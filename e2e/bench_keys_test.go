//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// emptyKeys is issue 13's ConfigMap data: n keys, empty values. The
// apiserver's size limit counts values, so 120,000 keys pass.
func emptyKeys(n int) map[string]string {
	m := make(map[string]string, n)
	for i := range n {
		m[strconv.FormatInt(int64(i), 36)] = ""
	}
	return m
}

// createOneByOne creates objs in turn and returns how long it took. Each is
// a big object for the apiserver (its managedFields alone name every key),
// so they go one at a time, with a generous timeout.
func createOneByOne(t *testing.T, objs []client.Object) time.Duration {
	t.Helper()
	start := time.Now()
	for _, o := range objs {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		err := env.Client.Create(ctx, o)
		cancel()
		if err != nil {
			t.Fatalf("creating %s after %s: %v", o.GetName(), time.Since(start).Round(time.Second), err)
		}
	}
	return time.Since(start)
}

// peakMiB is the confighash process's peak RSS (VmHWM).
func peakMiB(t *testing.T) float64 {
	t.Helper()
	return procStatusMiB(t, "VmHWM")
}

// TestBenchManyKeys measures confighash's RSS before and after 30
// ConfigMaps of 120,000 empty values in a namespace it does not serve, and
// then 3 more in one it serves: watched as they arrive, and re-listed by a
// restart (what every replica does after a crash). RSS is read 30 s after
// each step, so the garbage of decoding them has gone back to the OS.
func TestBenchManyKeys(t *testing.T) {
	benchOnly(t)
	const (
		quiet    = 30 * time.Second
		keys     = 120000
		unserved = 30
		served   = 3
	)
	startTimed(t)
	time.Sleep(quiet)
	base := rssMiB(t)
	data := emptyKeys(keys)
	var objs []client.Object
	off := env.NewNamespace(t, false)
	for i := range unserved {
		objs = append(objs, configMap(off, fmt.Sprintf("wide-%d", i), data))
	}
	took := createOneByOne(t, objs)
	time.Sleep(quiet)
	watched, watchedPeak := rssMiB(t), peakMiB(t)
	startTimed(t)
	time.Sleep(quiet)
	relisted, relistedPeak := rssMiB(t), peakMiB(t)

	on := env.NewNamespace(t, true)
	objs = objs[:0]
	for i := range served {
		objs = append(objs, configMap(on, fmt.Sprintf("wide-%d", i), data))
	}
	took += createOneByOne(t, objs)
	time.Sleep(quiet)
	servedRSS, servedPeak := rssMiB(t), peakMiB(t)
	startTimed(t)
	time.Sleep(quiet)
	servedRelisted, servedRelistedPeak := rssMiB(t), peakMiB(t)

	fmt.Printf("\nconfighash RSS with ConfigMaps of %d empty values (issue 13; %d created in %s)\nmachine: %s\n\n",
		keys, unserved+served, took.Round(time.Second), machine())
	fmt.Printf("| step | RSS 30 s after | peak RSS (VmHWM) of the process |\n|---|---|---|\n")
	fmt.Printf("| ready, none of them | %.1f MiB | |\n", base)
	fmt.Printf("| + %d in an unlabelled namespace, watched | %.1f MiB | %.1f MiB |\n", unserved, watched, watchedPeak)
	fmt.Printf("| the same, after a restart (re-listed) | %.1f MiB | %.1f MiB |\n", relisted, relistedPeak)
	fmt.Printf("| + %d in a served namespace, watched | %.1f MiB | %.1f MiB |\n", served, servedRSS, servedPeak)
	fmt.Printf("| all %d, after a restart (re-listed) | %.1f MiB | %.1f MiB |\n", unserved+served, servedRelisted, servedRelistedPeak)
}
