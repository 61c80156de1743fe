package app

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// codeRange is one mapping of the executable: its addresses.
type codeRange struct{ start, end uintptr }

// cleanCodeRanges reads smaps (the format of /proc/self/smaps) and returns
// the mappings of exe that are read-only and hold no page of their own (no
// anonymous page, which a private mapping gets when a page of it is
// written): code and read-only data, as the file holds them. Dropping such
// a page loses nothing; the next access maps it again from the page cache
// (dirty there or not: a file just written has dirty pages until they are
// written back). A mapping with a page of its own (a relocated RELRO of a
// PIE build, say) is never one of them.
func cleanCodeRanges(smaps io.Reader, exe string) []codeRange {
	var out []codeRange
	var cur *codeRange
	clean := false
	flush := func() {
		if cur != nil && clean {
			out = append(out, *cur)
		}
		cur = nil
	}
	sc := bufio.NewScanner(smaps)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if strings.HasSuffix(fields[0], ":") {
			// A field of the current mapping.
			if fields[0] == "Anonymous:" && (len(fields) < 2 || fields[1] != "0") {
				clean = false
			}
			continue
		}
		a, b, isRange := strings.Cut(fields[0], "-")
		if !isRange || len(fields) < 2 {
			continue
		}
		flush()
		if len(fields) < 6 || fields[5] != exe || strings.Contains(fields[1], "w") || !strings.HasPrefix(fields[1], "r") {
			continue
		}
		start, err1 := strconv.ParseUint(a, 16, 64)
		end, err2 := strconv.ParseUint(b, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		cur, clean = &codeRange{start: uintptr(start), end: uintptr(end)}, true
	}
	flush()
	return out
}
