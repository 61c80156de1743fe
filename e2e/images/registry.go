package images

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Registry is an OCI registry served from this process, in memory, over
// plain HTTP on a loopback port: what the node pulls images from and Helm
// pushes charts to. It lives as long as the process that started it.
type Registry struct {
	srv  *http.Server
	host string
	done chan error
}

// StartRegistry serves a registry on 127.0.0.1 at a free port. Its request
// log (one line per request, no content) goes to logw.
func StartRegistry(logw io.Writer) (*Registry, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listening for the registry: %w", err)
	}
	r := &Registry{
		srv: &http.Server{
			Handler:           registry.New(registry.Logger(log.New(logw, "registry: ", log.LstdFlags))),
			ReadHeaderTimeout: 10 * time.Second,
		},
		host: ln.Addr().String(),
		done: make(chan error, 1),
	}
	go func() { r.done <- r.srv.Serve(ln) }()
	return r, nil
}

// RegistryFor is a registry (StartRegistry, logging nowhere) for a test,
// closed when it ends.
func RegistryFor(t testing.TB) *Registry {
	t.Helper()
	reg, err := StartRegistry(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := reg.Close(); err != nil {
			t.Error(err)
		}
	})
	return reg
}

// Host is the registry's host:port, the first element of its references.
func (r *Registry) Host() string { return r.host }

// Endpoint is the registry's base URL.
func (r *Registry) Endpoint() string { return "http://" + r.host }

// Ref is where spec's image lives in this registry: the same repository
// path and tag as spec.Ref, under this registry's host.
func (r *Registry) Ref(spec Spec) (name.Reference, error) {
	ref, err := name.ParseReference(spec.Ref)
	if err != nil {
		return nil, fmt.Errorf("image reference %q: %w", spec.Ref, err)
	}
	return name.ParseReference(r.host+"/"+ref.Context().RepositoryStr()+":"+ref.Identifier(), name.Insecure)
}

// Push uploads an image index as spec's image.
func (r *Registry) Push(ctx context.Context, spec Spec, idx v1.ImageIndex) error {
	ref, err := r.Ref(spec)
	if err != nil {
		return err
	}
	if err := remote.WriteIndex(ref, idx, remote.WithContext(ctx)); err != nil {
		return fmt.Errorf("pushing %s: %w", ref, err)
	}
	return nil
}

// Index reads spec's image index back from the registry, as a client that
// pulls it sees it.
func (r *Registry) Index(ctx context.Context, spec Spec) (v1.ImageIndex, error) {
	ref, err := r.Ref(spec)
	if err != nil {
		return nil, err
	}
	idx, err := remote.Index(ref, remote.WithContext(ctx))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", ref, err)
	}
	return idx, nil
}

// Close stops serving; what was pushed is gone with it.
func (r *Registry) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	// A client's spare connection that never sent a request (a push's
	// parallel uploads leave some) counts as busy for its first 5 s, so
	// Shutdown can time out on nothing; what is left is dropped.
	if errors.Is(err, context.DeadlineExceeded) {
		err = r.srv.Close()
	}
	if serveErr := <-r.done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	if err != nil {
		return fmt.Errorf("stopping the registry: %w", err)
	}
	return nil
}
