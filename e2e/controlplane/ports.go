//go:build linux

package controlplane

import (
	"fmt"
	"net"
)

// FreePorts returns n distinct loopback TCP ports that were free a moment ago.
// All listeners stay open until every port is chosen, so the kernel cannot
// hand out the same port twice; there is still a small window between closing
// them and a child binding the port, which is acceptable for tests.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("reserving a loopback port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
