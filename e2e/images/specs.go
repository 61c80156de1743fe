package images

// The images the local node runs. Their references use a domain that no
// registry serves, so a pod that somehow asked to pull one would fail loudly
// rather than fetch something else. Functions rather than variables: the
// house keeps no package globals.

// Sandbox holds each pod's namespaces: containerd's sandbox_image.
func Sandbox() Spec {
	return Spec{Ref: "confighash.local/sandbox:e2e", Package: "./e2e/cmd/sandbox", Binary: "/sandbox"}
}

// SampleApp prints the config it read, for the user's-view specs and the demo.
func SampleApp() Spec {
	return Spec{Ref: "confighash.local/sampleapp:e2e", Package: "./e2e/cmd/sampleapp", Binary: "/sampleapp"}
}

// Confighash is the product, deployed from its own manifests.
func Confighash() Spec {
	return Spec{Ref: "confighash.local/confighash:e2e", Package: "./cmd/confighash", Binary: "/confighash"}
}
