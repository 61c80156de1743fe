package release

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// KrewPlugin is the krew plugin manifest (index.krew.dev's Plugin,
// v1alpha2): the fields krew reads to install one platform's archive.
type KrewPlugin struct {
	APIVersion string       `json:"apiVersion"`
	Kind       string       `json:"kind"`
	Metadata   KrewMetadata `json:"metadata"`
	Spec       KrewSpec     `json:"spec"`
}

// KrewMetadata names the plugin: `kubectl krew install NAME`.
type KrewMetadata struct {
	Name string `json:"name"`
}

// KrewSpec is the plugin's version, description and archives.
type KrewSpec struct {
	Version          string         `json:"version"`
	Homepage         string         `json:"homepage"`
	ShortDescription string         `json:"shortDescription"`
	Description      string         `json:"description"`
	Platforms        []KrewPlatform `json:"platforms"`
}

// KrewPlatform is one archive: where it is, its checksum, the binary in
// it, and the machines it is for.
type KrewPlatform struct {
	Selector KrewSelector `json:"selector"`
	URI      string       `json:"uri"`
	SHA256   string       `json:"sha256"`
	Bin      string       `json:"bin"`
}

// KrewSelector matches a machine's os and arch labels.
type KrewSelector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

// KrewName is the manifest's file name: krew wants <plugin name>.yaml.
const KrewName = "confighash.yaml"

// krewManifest names each archive at downloadURL+its name, with its
// checksum; krew installs the one whose os and arch match the machine.
func krewManifest(version, downloadURL string, archives []Archive) KrewPlugin {
	p := KrewPlugin{
		APIVersion: "krew.googlecontainertools.github.com/v1alpha2",
		Kind:       "Plugin",
		Metadata:   KrewMetadata{Name: "confighash"},
		Spec: KrewSpec{
			Version:          version,
			Homepage:         "https://github.com/confighash/confighash",
			ShortDescription: "Explain and preview config-triggered rollouts",
			Description: "Asks confighash why workloads did or did not roll when their ConfigMaps and\n" +
				"Secrets changed (kubectl confighash status), and what applying a changed\n" +
				"ConfigMap or Secret would roll (kubectl confighash preview -f FILE).\n",
		},
	}
	for _, a := range archives {
		p.Spec.Platforms = append(p.Spec.Platforms, KrewPlatform{
			Selector: KrewSelector{MatchLabels: map[string]string{"os": a.Platform.OS, "arch": a.Platform.Architecture}},
			URI:      downloadURL + a.Name,
			SHA256:   a.SHA256,
			Bin:      PluginBinary,
		})
	}
	return p
}

// WriteKrewManifest writes the manifest to dist.
func WriteKrewManifest(dist, version, downloadURL string, archives []Archive) (string, error) {
	b, err := yaml.Marshal(krewManifest(version, downloadURL, archives))
	if err != nil {
		return "", fmt.Errorf("encoding the krew manifest: %w", err)
	}
	path := filepath.Join(dist, KrewName)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", fmt.Errorf("writing the krew manifest: %w", err)
	}
	return path, nil
}
