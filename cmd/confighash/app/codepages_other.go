//go:build !linux

package app

// dropCodePages does nothing off Linux, where confighash is not served.
func dropCodePages() {}
