package waves

import (
	"testing"

	"github.com/confighash/confighash/internal/contract"
)

func TestKeepsBack(t *testing.T) {
	now := map[string]string{"configmap/app": "0123456789abcdef", "secret/db": "fedcba9876543210"}
	rolledBack := Halt{State: HaltInForce, Record: contract.Halt{Reason: RolledBack, Changes: ChangesOf(now)}}
	if !rolledBack.IsRollback() || !rolledBack.KeepsBack(now) {
		t.Fatal("a rollback's halt naming the content read now does not keep the workload back")
	}
	fixed := map[string]string{"configmap/app": "1111111111111111", "secret/db": "fedcba9876543210"}
	if rolledBack.KeepsBack(fixed) {
		t.Error("kept back after one of its sources changed")
	}
	more := map[string]string{"configmap/app": "0123456789abcdef", "secret/db": "fedcba9876543210", "configmap/new": "2222222222222222"}
	if rolledBack.KeepsBack(more) {
		t.Error("kept back while it reads a source the halt does not name")
	}
	failed := Halt{State: HaltInForce, Record: contract.Halt{Reason: "CrashLoopBackOff", Changes: ChangesOf(now)}}
	if failed.IsRollback() || failed.KeepsBack(now) {
		t.Error("a failed rollout's halt is taken for a rollback")
	}
	if (Halt{State: HaltReleased}).KeepsBack(now) || (Halt{State: HaltIgnored, Record: rolledBack.Record}).KeepsBack(now) {
		t.Error("a released or ignored halt keeps the workload back")
	}
}
