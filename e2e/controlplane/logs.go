//go:build linux

package controlplane

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// tailLines is how much of a process log a startup error quotes: enough to
// show a refused flag or a bind error, short enough to read in `go test`.
const tailLines = 30

// lineWriter prefixes every line with the process name before passing it on,
// so the output of three processes sharing Options.LogWriter stays readable.
// Whole lines are written under mu, which all lineWriters of one control plane
// share, because the destination (often a test log) is not assumed to be safe
// for concurrent use.
type lineWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (lw *lineWriter) Write(p []byte) (int, error) {
	lw.buf = append(lw.buf, p...)
	for {
		i := bytes.IndexByte(lw.buf, '\n')
		if i < 0 {
			break
		}
		if err := lw.emit(lw.buf[:i+1]); err != nil {
			return len(p), err
		}
		lw.buf = lw.buf[i+1:]
	}
	return len(p), nil
}

// flush writes a final line that had no newline, once the process has exited.
func (lw *lineWriter) flush() {
	if len(lw.buf) > 0 {
		// Best effort, as for the progress writes it stands in for: the
		// process has exited, and nobody is left to tell.
		_ = lw.emit(append(lw.buf, '\n'))
		lw.buf = nil
	}
}

func (lw *lineWriter) emit(line []byte) error {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	_, err := fmt.Fprintf(lw.w, "%s%s", lw.prefix, line)
	return err
}

// SyncBuffer is a bytes.Buffer that a process's output (or a harness's
// progress) can be written to while a test reads it.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TailFile returns the last n lines of a log file. Only the final 64 KiB
// (1 KiB a line for more than 64 lines) are read: the API server log can be
// large and only its end explains a failure.
func TailFile(path string, n int) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("opening log %s: %w", path, err)
	}
	defer f.Close()
	window := max(64<<10, int64(n)<<10)
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("inspecting log %s: %w", path, err)
	}
	offset := max(info.Size()-window, 0)
	data := make([]byte, info.Size()-offset)
	if _, err := f.ReadAt(data, offset); err != nil && err != io.EOF {
		return "", fmt.Errorf("reading log %s: %w", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if offset > 0 && len(lines) > 1 {
		lines = lines[1:] // the first line was probably cut in half
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n"), nil
}
