package images

import (
	"context"
	"fmt"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// PushTo uploads an image index to ref in a registry the user names, and
// returns the reference by digest that was pushed, which is what a node
// pulls whatever the tag later points at. Credentials are the Docker
// configuration's (`docker login`, `crane auth login`), as `docker push`
// takes them. A registry on localhost, a loopback or a private address is
// tried in TLS then in plain HTTP (go-containerregistry's rule); insecure
// allows plain HTTP for any other host too.
func PushTo(ctx context.Context, ref string, idx v1.ImageIndex, insecure bool) (name.Digest, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	r, err := name.ParseReference(ref, opts...)
	if err != nil {
		return name.Digest{}, fmt.Errorf("image reference %q: %w", ref, err)
	}
	digest, err := idx.Digest()
	if err != nil {
		return name.Digest{}, fmt.Errorf("digest of the index: %w", err)
	}
	if err := remote.WriteIndex(r, idx, remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)); err != nil {
		return name.Digest{}, fmt.Errorf("pushing %s: %w", r, err)
	}
	return r.Context().Digest(digest.String()), nil
}
