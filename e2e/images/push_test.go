package images

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// TestPushTo pushes to a plain-HTTP registry on loopback without being told
// it is insecure, as `make image-push` does to a local registry, and
// returns the digest a puller then gets; a reference that is none is
// refused before anything is sent.
func TestPushTo(t *testing.T) {
	ctx := context.Background()
	reg := RegistryFor(t)
	idx, err := random.Index(64, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	want, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	pushed, err := PushTo(ctx, reg.Host()+"/confighash:dev", idx, false)
	if err != nil {
		t.Fatal(err)
	}
	if pushed.DigestStr() != want.String() || pushed.Context().Name() != reg.Host()+"/confighash" {
		t.Errorf("pushed %s, want %s@%s", pushed, reg.Host()+"/confighash", want)
	}
	pulled, err := remote.Index(pushed, remote.WithContext(ctx))
	if err != nil {
		t.Fatalf("pulling what was pushed: %v", err)
	}
	if got, err := pulled.Digest(); err != nil || got != want {
		t.Errorf("pulled %s (%v), want %s", got, err, want)
	}
	if _, err := PushTo(ctx, "Not A Reference", idx, false); err == nil {
		t.Error("an invalid reference was accepted")
	}
}
