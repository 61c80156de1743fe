//go:build e2e

package deploy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/confighash/confighash/e2e/framework"
)

// metricsReaderRole is the ClusterRole the manifests ship for scrapers.
const metricsReaderRole = "confighash-metrics-reader"

// checkMetricsAccess scrapes the running binary's metrics endpoint the way a
// cluster's Prometheus would: with no token or a forged one it is refused,
// with confighash's own token (not bound to the reader role) it is
// forbidden, and with the token of a ServiceAccount bound to the manifests'
// reader ClusterRole it gets confighash's series (the re-stamp it just made
// among them). confighash asks the apiserver about each caller with its own
// ServiceAccount, so this also proves those RBAC rules.
//
// Every scrape verifies the certificate as the Prometheus configuration of
// docs/metrics.md does: against roots, for the Service's DNS name.
func checkMetricsAccess(ctx context.Context, t *testing.T, admin kubernetes.Interface, r *rendered, url string, roots *x509.CertPool) {
	t.Helper()
	scraper := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: Namespace, Name: "metrics-scraper"}}
	if _, err := admin.CoreV1().ServiceAccounts(Namespace).Create(ctx, scraper, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "metrics-scraper"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: metricsReaderRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: Namespace, Name: scraper.Name}},
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}

	for name, tc := range map[string]struct {
		token    string
		want     int
		wantBody string
	}{
		"no token":                              {want: http.StatusUnauthorized},
		"confighash's own token":                {token: framework.ServiceAccountToken(ctx, t, admin, r.SA), want: http.StatusForbidden},
		"a token bound to " + metricsReaderRole: {token: framework.ServiceAccountToken(ctx, t, admin, scraper), want: http.StatusOK, wantBody: "confighash_hook_restamps_total"},
	} {
		t.Run("metrics with "+name, func(t *testing.T) {
			code, body := scrape(ctx, t, url, tc.token, roots, metricsServerName(r))
			if code != tc.want {
				t.Fatalf("GET %s: status %d, want %d\n%s", url, code, tc.want, body)
			}
			if !strings.Contains(body, tc.wantBody) {
				t.Errorf("the metrics lack %s", tc.wantBody)
			}
		})
	}
}

// metricsServerName is the name a scraper verifies (server_name): the
// Service's, whose DNS names are the serving certificate's SANs.
func metricsServerName(r *rendered) string {
	return r.Service.Name + "." + r.Service.Namespace + ".svc"
}

// metricsRoots is what a scraper trusts: with --cert-mode=self the
// ConfigMap confighash publishes its CA bundle in (never the Secret, which
// holds the CA key); with cert-manager the issuing CA, here the
// self-signed pair standing in for it in certDir.
func metricsRoots(ctx context.Context, t *testing.T, admin kubernetes.Interface, r *rendered, certDir string) *x509.CertPool {
	t.Helper()
	var pemBytes []byte
	if r.Mode.Flag == "self" {
		name := flagsOf(t, r)["ca-bundle-configmap"]
		cm, err := admin.CoreV1().ConfigMaps(Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the CA bundle ConfigMap %s: %v", name, err)
		}
		pemBytes = []byte(cm.Data["ca.crt"])
	} else {
		b, err := os.ReadFile(filepath.Join(certDir, "tls.crt"))
		if err != nil {
			t.Fatal(err)
		}
		pemBytes = b
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pemBytes) {
		t.Fatal("no CA certificate for the scraper to trust")
	}
	return roots
}

func scrape(ctx context.Context, t *testing.T, url, token string, roots *x509.CertPool, serverName string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12}}}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("GET %s verifying %s: %v", url, serverName, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
