package images

// The images the local node runs. Their references use a domain that no
// registry serves, so a pod that somehow asked to pull one would fail loudly
// rather than fetch something else: the node is pointed at the local
// registry for this domain (see controlplane's MirrorRegistry), or has the
// image imported. Functions rather than variables: the house keeps no
// package globals.

// Domain is the registry host of every image reference here.
const Domain = "confighash.local"

// Sandbox holds each pod's namespaces: containerd's sandbox_image.
func Sandbox() Spec {
	return Spec{Ref: Domain + "/sandbox:e2e", Package: "./e2e/cmd/sandbox", Binary: "/sandbox"}
}

// SampleApp prints the config it read, for the user's-view specs and the demo.
func SampleApp() Spec {
	return Spec{Ref: Domain + "/sampleapp:e2e", Package: "./e2e/cmd/sampleapp", Binary: "/sampleapp"}
}

// Confighash is the product, deployed from its own manifests.
func Confighash() Spec {
	return Spec{Ref: Domain + "/confighash:e2e", Package: "./cmd/confighash", Binary: "/confighash"}
}

// ConfighashVersion is Confighash linked to report version and commit (as
// `confighash version` prints them), as make build links it.
func ConfighashVersion(version, commit string) Spec {
	const app = "github.com/confighash/confighash/cmd/confighash/app"
	s := Confighash()
	s.LinkFlags = []string{"-X " + app + ".version=" + version, "-X " + app + ".commit=" + commit}
	return s
}
