package app

import (
	"os"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

const smapsSample = `00400000-0155d000 r-xp 00000000 08:01 42 /bin/confighash
Rss:               20480 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
0155d000-0270b000 r--p 0115d000 08:01 42 /bin/confighash
Rss:               10240 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
0270b000-02790000 r--p 0230b000 08:01 42 /bin/confighash
Rss:                 100 kB
Private_Dirty:        12 kB
Anonymous:            12 kB
02790000-02800000 rw-p 0238b000 08:01 42 /bin/confighash
Rss:                 500 kB
Private_Dirty:         0 kB
Anonymous:             0 kB
7f0000000000-7f0000100000 r-xp 00000000 08:01 43 /lib/other.so
Rss:                  64 kB
Private_Dirty:         0 kB
7f0000200000-7f0000300000 rw-p 00000000 00:00 0
Rss:                 900 kB
Anonymous:           900 kB
`

// TestCleanCodeRanges: only the executable's read-only mappings that hold
// no page of their own are dropped; a relocated read-only one (a PIE's
// RELRO), its data, another file and the heap are not.
func TestCleanCodeRanges(t *testing.T) {
	got := cleanCodeRanges(strings.NewReader(smapsSample), "/bin/confighash")
	want := []codeRange{{0x00400000, 0x0155d000}, {0x0155d000, 0x0270b000}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ranges %x, want %x", got, want)
	}
}

// TestDropCodePagesLowersRSS: this test binary's own code and read-only
// data count less in its RSS after dropCodePages, and it runs on.
func TestDropCodePagesLowersRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	before := exeRSSKiB(t)
	dropCodePages()
	after := exeRSSKiB(t)
	t.Logf("the executable's pages in RSS: %d → %d KiB", before, after)
	if after >= before/2 {
		t.Errorf("the executable's pages in RSS: %d → %d KiB, want under half", before, after)
	}
}

// exeRSSKiB sums the Rss of the executable's read-only mappings.
func exeRSSKiB(t *testing.T) int {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	total, in := 0, false
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if !strings.HasSuffix(f[0], ":") {
			in = len(f) >= 6 && f[5] == exe && !strings.Contains(f[1], "w")
			continue
		}
		if in && f[0] == "Rss:" {
			n, _ := strconv.Atoi(f[1])
			total += n
		}
	}
	return total
}
