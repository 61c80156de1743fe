// Package main is the local node's pod sandbox image: it only has to stay
// alive, because the sandbox process holds the pod's namespaces (one that
// exits leaves containerd with a dangling namespace path). It exits on
// SIGTERM or SIGINT so that stopping a pod is quick.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
