package app

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"runtime/debug"
	"strconv"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/log"
)

// cgroup files holding the container's memory limit, v2 first.
const (
	cgroupV2MemoryMax = "/sys/fs/cgroup/memory.max"
	cgroupV1MemoryMax = "/sys/fs/cgroup/memory/memory.limit_in_bytes"
)

// DefaultMemoryLimitRatio leaves a tenth of the container's limit for what
// the Go runtime does not count (stacks beyond its estimate, cgo, the page
// cache charged to the container), so the collector works harder as the
// heap nears the limit instead of the kernel killing the pod.
const DefaultMemoryLimitRatio = 0.9

// setMemoryLimit gives the Go collector a soft limit derived from the
// container's memory limit, unless GOMEMLIMIT says otherwise. Without it the
// collector lets the heap double before collecting, and a burst of large
// admissions can take a pod past its limit while most of its heap is garbage.
func setMemoryLimit(ctx context.Context, ratio float64) {
	limit, source := memoryLimit(ratio, os.Getenv, os.ReadFile)
	logger := log.FromContext(ctx)
	if limit <= 0 {
		logger.V(1).Info("no Go memory limit set", "reason", source)
		return
	}
	debug.SetMemoryLimit(limit)
	logger.Info("set Go memory limit", "bytes", limit, "from", source, "ratio", ratio)
}

// memoryLimit computes the limit to set, and where it came from (or why
// there is none). It is pure, given getenv and readFile.
func memoryLimit(ratio float64, getenv func(string) string, readFile func(string) ([]byte, error)) (int64, string) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, "GOMEMLIMIT is set"
	}
	if ratio <= 0 {
		return 0, "--memory-limit-ratio is 0"
	}
	for _, path := range []string{cgroupV2MemoryMax, cgroupV1MemoryMax} {
		b, err := readFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, path + ": " + err.Error()
		}
		s := strings.TrimSpace(string(b))
		if s == "max" {
			return 0, path + ": no limit"
		}
		n, err := strconv.ParseInt(s, 10, 64)
		// cgroup v1 reports "no limit" as the largest page-aligned int64.
		if err != nil || n <= 0 || n >= 1<<62 {
			return 0, path + ": no limit"
		}
		return int64(float64(n) * ratio), path
	}
	return 0, "no cgroup memory limit found"
}
