//go:build e2e

package deploy

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// remove runs a removal and checks what is left against the docs, runs
// the docs' commands and checks that nothing is left but the workloads,
// none of which rolled.
func (u *upgrade) remove(ctx context.Context, workloads []client.Object, removal string, run func() error) {
	t := u.t
	t.Helper()
	before, err := rollStates(ctx, u.env.Client, workloads)
	if err != nil {
		t.Fatal(err)
	}
	u.timed(removal, run)
	left, problems := u.waitLeftovers(ctx, func(found []trace) []string { return u.undocumented(found, removal) })
	t.Logf("left after %s: %v", removal, left)
	if len(problems) != 0 {
		t.Errorf("after %s, the cluster and docs/operations.md's Remove section disagree:\n%s", removal, strings.Join(problems, "\n"))
	}
	for _, args := range u.docs.Commands {
		if _, err := u.env.Run(ctx, "", args...); err != nil {
			t.Errorf("the docs' removal command: %v", err)
		}
	}
	_, problems = u.waitLeftovers(ctx, func(found []trace) []string {
		var out []string
		for _, f := range found {
			out = append(out, "left: "+f.String())
		}
		return out
	})
	if len(problems) != 0 {
		t.Errorf("after %s and the docs' commands, confighash left:\n%s", removal, strings.Join(problems, "\n"))
	}
	after, err := rollStates(ctx, u.env.Client, workloads)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rolled(before, after) {
		t.Errorf("%s rolled %s", removal, r)
	}
}

// waitLeftovers sweeps until check finds no problem, for at most two
// minutes (the garbage collector and namespace deletion take a while), and
// returns the last sweep's traces and problems.
func (u *upgrade) waitLeftovers(ctx context.Context, check func([]trace) []string) ([]trace, []string) {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		found, err := sweep(ctx, u.env.Config, u.spare)
		if err != nil {
			u.t.Fatal(err)
		}
		found = slices.DeleteFunc(found, kubernetesMade)
		problems := check(found)
		if len(problems) == 0 || time.Now().After(deadline) {
			return found, problems
		}
		time.Sleep(2 * time.Second)
	}
}

// kubernetesMade says whether a trace is only an object Kubernetes makes in
// every namespace, confighash's too.
func kubernetesMade(f trace) bool {
	return f.Namespace == Namespace && (f.Key == "configmap/kube-root-ca.crt" || f.Key == "serviceaccount/default")
}

// undocumented compares what a removal left with the docs' table: every
// object found must be in a row the removal leaves, and every named object
// of such a row must be found.
func (u *upgrade) undocumented(found []trace, removal string) []string {
	var out []string
	for _, f := range found {
		covered := false
		for _, r := range u.docs.Rows {
			covered = covered || (r.leftBy(removal) && r.matches(f.Key, f.Namespace))
		}
		if !covered {
			out = append(out, "not in the docs: "+f.String())
		}
	}
	for _, r := range u.docs.Rows {
		if !r.leftBy(removal) || r.Namespace == "*" {
			continue
		}
		for _, k := range r.Keys {
			if strings.HasSuffix(k, "/*") {
				continue
			}
			present := false
			for _, f := range found {
				present = present || (f.Key == k && f.Namespace == r.Namespace)
			}
			if !present {
				out = append(out, fmt.Sprintf("in the docs, not left: %s in %q", k, r.Namespace))
			}
		}
	}
	return out
}
