package release

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/confighash/confighash/e2e/images"
)

// The repositories a release pushes to, under Options.Registry.
const (
	ImageRepo  = "confighash"
	PluginRepo = "kubectl-confighash"
	ChartRepo  = "charts" // the chart is charts/confighash
)

// titleAnnotation names a layer's file, as `oras push` and `oras pull` do.
const titleAnnotation = "org.opencontainers.image.title"

// Published is what a release pushed and wrote.
type Published struct {
	Index    name.Digest // the image index
	SBOM     name.Digest // the SBOM image
	Chart    PushedChart
	Plugin   name.Digest // the plugin artefact
	Archives []Archive
	Files    []string // in dist: SBOM, archives, checksums, krew manifest
}

// Publish builds the release the options name, pushes it and leaves its
// files in o.Dist, writing one line to progress per step.
func Publish(ctx context.Context, o Options, progress io.Writer) (Published, error) {
	var out Published
	if err := o.Check(); err != nil {
		return out, err
	}
	key, err := LoadPrivateKey(o.KeyPath)
	if err != nil {
		return out, err
	}
	imageRef, err := o.Ref(ImageRepo)
	if err != nil {
		return out, err
	}
	if err := checkRegistry(ctx, imageRef.Context().Registry); err != nil {
		return out, err
	}
	if err := os.MkdirAll(o.Dist, 0o755); err != nil {
		return out, fmt.Errorf("creating %s: %w", o.Dist, err)
	}
	work, err := os.MkdirTemp("", "confighash-release-")
	if err != nil {
		return out, fmt.Errorf("creating a work directory: %w", err)
	}
	defer os.RemoveAll(work)
	step := stepper(progress)

	spec := images.ConfighashVersion(o.Version, o.Commit)
	spec.Ref = imageRef.String()
	done := step("building the image for %s", platformList(images.Platforms()))
	idx, err := images.BuildIndex(ctx, o.Root, work, spec, images.Platforms())
	if err != nil {
		return out, err
	}
	done()
	if out.Index, err = images.PushTo(ctx, imageRef.String(), idx, o.PlainHTTP); err != nil {
		return out, err
	}
	fmt.Fprintf(progress, "pushed %s@%s\n", imageRef, out.Index.DigestStr())
	if err := pushSignature(ctx, out.Index, key); err != nil {
		return out, err
	}
	fmt.Fprintf(progress, "signed %s\n", out.Index.DigestStr())

	sbomPath := filepath.Join(o.Dist, fmt.Sprintf("confighash_%s_sbom.cdx.json", o.Version))
	if err := WriteSBOM(ctx, o.CycloneDX, filepath.Join(work, "bin-confighash-amd64"), o.Version, sbomPath); err != nil {
		return out, err
	}
	if out.SBOM, err = pushSBOM(ctx, out.Index, sbomPath, key); err != nil {
		return out, err
	}
	fmt.Fprintf(progress, "attached and signed the SBOM %s\n", filepath.Base(sbomPath))
	out.Files = append(out.Files, sbomPath)

	if out.Chart, err = publishChart(o, work, imageRef.Context().Name()); err != nil {
		return out, err
	}
	fmt.Fprintf(progress, "pushed the chart %s:%s (%d bytes)\n", out.Chart.Ref, out.Chart.Version, out.Chart.Bytes)
	out.Files = append(out.Files, out.Chart.Archive)

	done = step("building the kubectl plugin for %s", platformList(PluginPlatforms()))
	files, archives, err := pluginFiles(ctx, o, spec, work)
	if err != nil {
		return out, err
	}
	done()
	out.Archives, out.Files = archives, append(out.Files, files...)
	pluginRef, err := o.Ref(PluginRepo)
	if err != nil {
		return out, err
	}
	if out.Plugin, err = pushFiles(ctx, pluginRef, files); err != nil {
		return out, err
	}
	fmt.Fprintf(progress, "pushed the plugin archives, checksums and krew manifest to %s\n", pluginRef)
	return out, nil
}

// pushSignature signs d and pushes the signature to its .sig tag.
func pushSignature(ctx context.Context, d name.Digest, key *ecdsa.PrivateKey) error {
	img, err := signatureImage(d, key)
	if err != nil {
		return err
	}
	tag, err := attachedTag(d, "sig")
	if err != nil {
		return err
	}
	_, err = pushImage(ctx, tag, img)
	return err
}

// pushSBOM attaches the SBOM to the index at its .sbom tag and signs it.
func pushSBOM(ctx context.Context, index name.Digest, path string, key *ecdsa.PrivateKey) (name.Digest, error) {
	img, err := sbomImage(path)
	if err != nil {
		return name.Digest{}, err
	}
	tag, err := attachedTag(index, "sbom")
	if err != nil {
		return name.Digest{}, err
	}
	d, err := pushImage(ctx, tag, img)
	if err != nil {
		return name.Digest{}, err
	}
	return d, pushSignature(ctx, d, key)
}

// publishChart pushes the chart at the release's version, its default
// image the released one; the package is left in dist.
func publishChart(o Options, work, imageRepo string) (PushedChart, error) {
	dir, err := chartWithImage(filepath.Join(o.Root, "charts", "confighash"), work, imageRepo)
	if err != nil {
		return PushedChart{}, err
	}
	client, err := NewRegistryClient(o.PlainHTTP, "")
	if err != nil {
		return PushedChart{}, err
	}
	return PushChart(Chart{
		Dir: dir, Work: o.Dist, Remote: "oci://" + o.Registry + "/" + ChartRepo,
		Version: o.ChartVersion(), AppVersion: o.Version, PlainHTTP: o.PlainHTTP, Client: client,
	})
}

// pluginFiles writes the plugin archives (the linux ones from the image's
// binaries, the darwin ones compiled here), their checksums and the krew
// manifest to dist.
func pluginFiles(ctx context.Context, o Options, spec images.Spec, work string) ([]string, []Archive, error) {
	var archives []Archive
	var files []string
	for _, p := range PluginPlatforms() {
		bin := filepath.Join(work, "bin-confighash-"+p.Architecture) // BuildIndex's
		if p.OS != "linux" {
			bin = filepath.Join(work, "bin-confighash-"+p.OS+"-"+p.Architecture)
			if err := images.Compile(ctx, o.Root, bin, spec, p); err != nil {
				return nil, nil, err
			}
		}
		a, err := WriteArchive(o.Dist, o.Version, p, bin)
		if err != nil {
			return nil, nil, err
		}
		archives = append(archives, a)
		files = append(files, filepath.Join(o.Dist, a.Name))
	}
	sums, err := WriteChecksums(o.Dist, o.Version, archives)
	if err != nil {
		return nil, nil, err
	}
	krew, err := WriteKrewManifest(o.Dist, o.Version, o.DownloadURL, archives)
	if err != nil {
		return nil, nil, err
	}
	return append(files, sums, krew), archives, nil
}

// pushFiles pushes files as one OCI artefact, a layer each titled with its
// file name, as `oras push ref files…` does.
func pushFiles(ctx context.Context, ref name.Tag, files []string) (name.Digest, error) {
	img := artefactBase()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return name.Digest{}, fmt.Errorf("reading %s: %w", f, err)
		}
		var err2 error
		img, err2 = mutate.Append(img, mutate.Addendum{
			Layer:       static.NewLayer(b, fileMediaType(f)),
			Annotations: map[string]string{titleAnnotation: filepath.Base(f)},
		})
		if err2 != nil {
			return name.Digest{}, fmt.Errorf("adding %s: %w", f, err2)
		}
	}
	return pushImage(ctx, ref, img)
}

// fileMediaType is a pushed file's media type, by its extension.
func fileMediaType(f string) types.MediaType {
	switch filepath.Ext(f) {
	case ".gz":
		return types.OCILayer // a gzipped tar
	case ".yaml":
		return "application/yaml"
	}
	return "text/plain"
}

// stepper prints a step when it starts and how long it took when done.
func stepper(w io.Writer) func(format string, args ...any) func() {
	return func(format string, args ...any) func() {
		msg := fmt.Sprintf(format, args...)
		fmt.Fprintln(w, msg+" …")
		start := time.Now()
		return func() { fmt.Fprintf(w, "%s: done in %s\n", msg, time.Since(start).Round(100*time.Millisecond)) }
	}
}

func platformList(ps []v1.Platform) string {
	var s string
	for i, p := range ps {
		if i > 0 {
			s += ", "
		}
		s += p.String()
	}
	return s
}
