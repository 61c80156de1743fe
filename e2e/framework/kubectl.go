package framework

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Run runs kubectl against the cluster and returns its standard output; a
// failure carries the standard error.
func (e *Env) Run(ctx context.Context, stdin string, args ...string) (string, error) {
	stdout, _, err := e.kubectl(ctx, stdin, args...)
	return stdout, err
}

func (e *Env) kubectl(ctx context.Context, stdin string, args ...string) (stdout, stderr string, err error) {
	cmd := exec.CommandContext(ctx, e.KubectlPath, append([]string{"--kubeconfig", e.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return string(out), errb.String(), fmt.Errorf("kubectl %s: %w\n%s%s", strings.Join(args, " "), err, out, errb.String())
	}
	return string(out), errb.String(), nil
}
