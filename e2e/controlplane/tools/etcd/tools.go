//go:build tools

// Package etcd pins the etcd server that the e2e harness builds. It lives in
// its own module so that the main go.mod never requires etcd.
package etcd

import (
	_ "go.etcd.io/etcd/server/v3"
)
