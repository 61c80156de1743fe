package app

import (
	"os"
	"syscall"
)

// dropCodePages unmaps the pages of confighash's own code and read-only
// data (cleanCodeRanges) from the process. Most of them were mapped at
// start-up (every package's init, the API scheme, flags, the first list's
// decoding), and the kernel maps the pages around each one it faults in
// too, so some 30 MiB of the binary counted in RSS though a fraction runs
// once started (docs/benchmarks.md). The pages confighash goes on running
// map back in at their next use, from the page cache. Best effort: a
// mapping it cannot read or advise is left as it is.
func dropCodePages() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return
	}
	ranges := cleanCodeRanges(f, exe)
	_ = f.Close()
	for _, r := range ranges {
		// By address: the mapping is the executable's, which stays
		// mapped as long as the process runs.
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, r.start, r.end-r.start, syscall.MADV_DONTNEED)
	}
}
