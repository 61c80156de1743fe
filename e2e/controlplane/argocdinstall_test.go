//go:build linux

package controlplane

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"k8s.io/client-go/rest"
)

// TestArgoCDObjects checks the traps of running Argo CD out of cluster that
// the objects must avoid: the settings objects carry the part-of label the
// settings manager selects by, and the cluster Secret registers the
// kubeconfig's server with its credentials in Argo CD's cluster config.
func TestArgoCDObjects(t *testing.T) {
	tls := rest.TLSClientConfig{CAData: []byte("ca"), CertData: []byte("cert"), KeyData: []byte("key")}
	objs, err := argocdObjects("https://127.0.0.1:6443", tls)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]map[string]any{}
	for _, o := range objs {
		byName[o["kind"].(string)+"/"+o["metadata"].(map[string]any)["name"].(string)] = o
	}
	for _, name := range []string{"ConfigMap/argocd-cm", "ConfigMap/argocd-cmd-params-cm", "Secret/argocd-secret"} {
		o, ok := byName[name]
		if !ok {
			t.Fatalf("no %s", name)
		}
		labels, _ := o["metadata"].(map[string]any)["labels"].(map[string]string)
		if labels["app.kubernetes.io/part-of"] != "argocd" {
			t.Errorf("%s lacks the label app.kubernetes.io/part-of=argocd: %v", name, labels)
		}
	}
	if _, ok := byName["AppProject/default"]; !ok {
		t.Error("no default AppProject")
	}
	cluster, ok := byName["Secret/local-cluster"]
	if !ok {
		t.Fatal("no cluster Secret")
	}
	if l := cluster["metadata"].(map[string]any)["labels"].(map[string]string); l["argocd.argoproj.io/secret-type"] != "cluster" {
		t.Errorf("the cluster Secret is not labelled as one: %v", l)
	}
	data := cluster["stringData"].(map[string]string)
	if data["server"] != "https://127.0.0.1:6443" {
		t.Errorf("the cluster Secret names server %q", data["server"])
	}
	var cfg struct {
		TLSClientConfig struct{ CAData, CertData, KeyData string } `json:"tlsClientConfig"`
	}
	if err := json.Unmarshal([]byte(data["config"]), &cfg); err != nil {
		t.Fatalf("the cluster config: %v", err)
	}
	for name, got := range map[string]string{"ca": cfg.TLSClientConfig.CAData, "cert": cfg.TLSClientConfig.CertData, "key": cfg.TLSClientConfig.KeyData} {
		if b, _ := base64.StdEncoding.DecodeString(got); string(b) != name {
			t.Errorf("the cluster config's %sData does not carry the kubeconfig's", name)
		}
	}
}
