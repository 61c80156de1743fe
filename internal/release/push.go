package release

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// remoteOpts authenticate as docker login and helm registry login have
// (the Docker config), or anonymously.
func remoteOpts(ctx context.Context) []remote.Option {
	return []remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}
}

// pushImage pushes img to ref and returns its digest reference.
func pushImage(ctx context.Context, ref name.Reference, img v1.Image) (name.Digest, error) {
	if err := remote.Write(ref, img, remoteOpts(ctx)...); err != nil {
		return name.Digest{}, fmt.Errorf("pushing %s: %w", ref, err)
	}
	h, err := img.Digest()
	if err != nil {
		return name.Digest{}, fmt.Errorf("digest of %s: %w", ref, err)
	}
	return ref.Context().Digest(h.String()), nil
}

// checkRegistry asks the registry's /v2/ endpoint whether it is there, so
// that a wrong REGISTRY fails before minutes of compiling. Any answer is a
// registry (401 asks for the credentials the pushes will present).
func checkRegistry(ctx context.Context, reg name.Registry) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	url := reg.Scheme() + "://" + reg.RegistryStr() + "/v2/"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("registry %s: %w", reg, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("registry %s is unreachable: %w", reg, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusUnauthorized {
		return fmt.Errorf("registry %s: %s answered %s, not a registry's /v2/", reg, url, resp.Status)
	}
	return nil
}
