//go:build linux

package controlplane

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// hostProcess is a process of this machine as /proc shows it.
type hostProcess struct {
	pid int
	// args is its command line, NUL-separated as /proc has it.
	args string
}

// hostProcesses lists the machine's processes with their command lines;
// one that ends while it is read is left out.
func hostProcesses() ([]hostProcess, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("listing processes: %w", err)
	}
	var out []hostProcess
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		args, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		out = append(out, hostProcess{pid: pid, args: string(args)})
	}
	return out, nil
}

// mentions reports whether an argument contains s.
func (p hostProcess) mentions(s string) bool { return strings.Contains(p.args, s) }

func (p hostProcess) String() string {
	return strconv.Itoa(p.pid) + ": " + strings.ReplaceAll(p.args, "\x00", " ")
}

// procStat reads pid's state and parent from /proc/<pid>/stat; ok is false
// when the process is gone. The fields follow the parenthesised command
// name, which may itself contain spaces or parentheses, hence the last ')'.
func procStat(pid int) (state byte, ppid int, ok bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, 0, false
	}
	fields := strings.Fields(string(stat[i+1:]))
	if len(fields) < 2 {
		return 0, 0, false
	}
	ppid, err = strconv.Atoi(fields[1])
	return fields[0][0], ppid, err == nil
}

// alive reports whether pid is a live process: not gone, not a zombie.
func alive(pid int) bool {
	state, _, ok := procStat(pid)
	return ok && state != 'Z' && state != 'X'
}
