package app

import (
	"io/fs"
	"testing"
)

func TestMemoryLimit(t *testing.T) {
	const mi = 1 << 20
	tests := map[string]struct {
		env   string
		files map[string]string
		ratio float64
		want  int64
	}{
		"cgroup v2":                  {files: map[string]string{cgroupV2MemoryMax: "536870912\n"}, ratio: 0.9, want: 512 * mi * 9 / 10},
		"cgroup v2 unlimited":        {files: map[string]string{cgroupV2MemoryMax: "max\n"}, ratio: 0.9},
		"cgroup v1":                  {files: map[string]string{cgroupV1MemoryMax: "268435456\n"}, ratio: 0.5, want: 128 * mi},
		"cgroup v1 unlimited":        {files: map[string]string{cgroupV1MemoryMax: "9223372036854771712\n"}, ratio: 0.9},
		"v2 wins over v1":            {files: map[string]string{cgroupV2MemoryMax: "104857600", cgroupV1MemoryMax: "536870912"}, ratio: 1, want: 100 * mi},
		"no cgroup":                  {ratio: 0.9},
		"garbage":                    {files: map[string]string{cgroupV2MemoryMax: "lots"}, ratio: 0.9},
		"GOMEMLIMIT set by the user": {env: "400MiB", files: map[string]string{cgroupV2MemoryMax: "536870912"}, ratio: 0.9},
		"ratio 0 turns it off":       {files: map[string]string{cgroupV2MemoryMax: "536870912"}, ratio: 0},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "GOMEMLIMIT" {
					return tc.env
				}
				return ""
			}
			readFile := func(p string) ([]byte, error) {
				if s, ok := tc.files[p]; ok {
					return []byte(s), nil
				}
				return nil, fs.ErrNotExist
			}
			if got, why := memoryLimit(tc.ratio, getenv, readFile); got != tc.want {
				t.Errorf("memoryLimit = %d (%s), want %d", got, why, tc.want)
			}
		})
	}
}
