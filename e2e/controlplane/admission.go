//go:build linux

package controlplane

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// admissionConfigFiles are the files behind --admission-control-config-file.
type admissionConfigFiles struct {
	Config, Kubeconfig string
}

// writeAdmissionConfig writes, under dir, an AdmissionConfiguration whose
// webhook plugins (mutating and validating) take their credentials from a
// kubeconfig that presents files' webhook client pair to every webhook: the
// user named "*" matches any webhook's host. This is what a cluster
// operator sets up so that a webhook can tell the API server's calls from
// anyone else's (confighash's --webhook-client-ca-file); a real cluster
// would name the webhook's service host instead of "*", so that the
// certificate goes to that webhook only.
func writeAdmissionConfig(dir string, files pkiFiles) (admissionConfigFiles, error) {
	out := admissionConfigFiles{
		Config:     filepath.Join(dir, "admission-config.yaml"),
		Kubeconfig: filepath.Join(dir, "admission-webhook-kubeconfig"),
	}
	kc := clientcmdapi.NewConfig()
	kc.AuthInfos["*"] = &clientcmdapi.AuthInfo{ClientCertificate: files.WebhookClientCert, ClientKey: files.WebhookClientKey}
	if err := clientcmd.WriteToFile(*kc, out.Kubeconfig); err != nil {
		return admissionConfigFiles{}, fmt.Errorf("writing the webhook kubeconfig: %w", err)
	}
	config := "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n"
	for _, plugin := range []string{"MutatingAdmissionWebhook", "ValidatingAdmissionWebhook"} {
		config += fmt.Sprintf("- name: %s\n  configuration:\n    apiVersion: apiserver.config.k8s.io/v1\n    kind: WebhookAdmissionConfiguration\n    kubeConfigFile: %q\n", plugin, out.Kubeconfig)
	}
	if err := os.WriteFile(out.Config, []byte(config), 0o600); err != nil {
		return admissionConfigFiles{}, fmt.Errorf("writing the admission configuration: %w", err)
	}
	return out, nil
}
