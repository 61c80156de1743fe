package main

import (
	"testing"

	"github.com/confighash/confighash/e2e/images"
)

// TestParsePlatforms: the Makefile's PLATFORMS are read as docker buildx
// reads them; a platform the builder cannot make is refused.
func TestParsePlatforms(t *testing.T) {
	got, err := parsePlatforms("linux/amd64, linux/arm64")
	if err != nil {
		t.Fatal(err)
	}
	if want := images.Platforms(); len(got) != 2 || got[0].String() != want[0].String() || got[1].String() != want[1].String() {
		t.Errorf("platforms %v, want %v", got, want)
	}
	for _, bad := range []string{"", "amd64", "darwin/arm64", "linux/386", "linux/amd64,"} {
		if _, err := parsePlatforms(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
