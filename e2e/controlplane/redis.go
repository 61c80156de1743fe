//go:build linux

package controlplane

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// redisServer is Debian's redis-server, which Argo CD's controller and
// repo-server share as their cache. It comes from Debian's packages, like
// the node's containerd: the Go module proxy does not serve it.
const redisServer = "redis-server"

// EnsureRedis installs Debian's redis-server with apt-get if the machine
// lacks it. With it present it does nothing and prints nothing.
func EnsureRedis(ctx context.Context, progress io.Writer) error {
	return ensurePackages(ctx, progress, "Argo CD's cache", []hostNeed{{redisServer, "redis-server"}})
}

// startRedis runs a redis-server on a loopback port, with nothing saved to
// disk: Argo CD only caches in it.
func startRedis(ctx context.Context, port int, dir string) (*process, error) {
	p, err := startProcess(processSpec{
		name: "redis",
		path: redisServer,
		args: []string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir},
		dir:  dir,
	})
	if err != nil {
		return nil, err
	}
	if err := waitReady(ctx, p, 30*time.Second, redisPing(port)); err != nil {
		return nil, joinProcessStop(err, p)
	}
	return p, nil
}

// redisPing asks the server PING in its own protocol and wants PONG.
func redisPing(port int) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			return err
		}
		defer c.Close()
		if deadline, ok := ctx.Deadline(); ok {
			_ = c.SetDeadline(deadline)
		}
		if _, err := io.WriteString(c, "PING\r\n"); err != nil {
			return err
		}
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return err
		}
		if strings.TrimSpace(line) != "+PONG" {
			return fmt.Errorf("redis answered PING with %q", strings.TrimSpace(line))
		}
		return nil
	}
}

// joinProcessStop stops p after a failed start, keeping both errors.
func joinProcessStop(err error, p *process) error {
	if stopErr := p.stop(); stopErr != nil {
		return fmt.Errorf("%w (and stopping %s: %w)", err, p.name, stopErr)
	}
	return err
}
