//go:build linux

package controlplane

import (
	"bytes"
	"path/filepath"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
)

func TestAdminKubeconfigParses(t *testing.T) {
	p := testPKI(t)
	const host = "https://127.0.0.1:6443"
	data, err := adminKubeconfig(host, p)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := writeKubeconfig(path, data); err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("kubeconfig does not load: %v", err)
	}
	if cfg.Host != host {
		t.Errorf("host = %q, want %q", cfg.Host, host)
	}
	if !bytes.Equal(cfg.CAData, p.CACert) || !bytes.Equal(cfg.CertData, p.AdminCert) || !bytes.Equal(cfg.KeyData, p.AdminKey) {
		t.Error("kubeconfig does not embed the CA, admin certificate and key")
	}
	raw, err := clientcmd.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	if ns := raw.Contexts[raw.CurrentContext].Namespace; ns != "default" {
		t.Errorf("namespace = %q, want default", ns)
	}

	rc := adminRESTConfig(host, p)
	if rc.Host != cfg.Host || !bytes.Equal(rc.CertData, cfg.CertData) {
		t.Error("adminRESTConfig differs from the kubeconfig")
	}
}
