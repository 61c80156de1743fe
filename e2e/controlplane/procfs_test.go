//go:build linux

package controlplane

import (
	"os"
	"os/exec"
	"testing"
)

// TestProcfsSeesThisProcessAndNotAReapedChild: hostProcesses lists this
// test with its arguments, procStat names its parent, and alive tells a
// running process from one that has exited and been reaped.
func TestProcfsSeesThisProcessAndNotAReapedChild(t *testing.T) {
	procs, err := hostProcesses()
	if err != nil {
		t.Fatal(err)
	}
	var self *hostProcess
	for i := range procs {
		if procs[i].pid == os.Getpid() {
			self = &procs[i]
		}
	}
	if self == nil || !self.mentions(os.Args[0]) {
		t.Fatalf("this process (%d, %s) not listed with its arguments: %v", os.Getpid(), os.Args[0], self)
	}
	if _, ppid, ok := procStat(os.Getpid()); !ok || ppid != os.Getppid() {
		t.Errorf("procStat: parent %d (ok %v), want %d", ppid, ok, os.Getppid())
	}
	if !alive(os.Getpid()) {
		t.Error("this process is not alive")
	}
	child := exec.Command("true")
	if err := child.Run(); err != nil {
		t.Fatal(err)
	}
	if alive(child.Process.Pid) {
		t.Errorf("reaped child %d is alive", child.Process.Pid)
	}
}
