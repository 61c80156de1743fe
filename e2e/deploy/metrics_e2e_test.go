//go:build e2e

package deploy

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
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
func checkMetricsAccess(ctx context.Context, t *testing.T, admin kubernetes.Interface, r *rendered, url string) {
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
		"confighash's own token":                {token: serviceAccountToken(ctx, t, admin, r.SA), want: http.StatusForbidden},
		"a token bound to " + metricsReaderRole: {token: serviceAccountToken(ctx, t, admin, scraper), want: http.StatusOK, wantBody: "confighash_restamps_total"},
	} {
		t.Run("metrics with "+name, func(t *testing.T) {
			code, body := scrape(ctx, t, url, tc.token)
			if code != tc.want {
				t.Fatalf("GET %s: status %d, want %d\n%s", url, code, tc.want, body)
			}
			if !strings.Contains(body, tc.wantBody) {
				t.Errorf("the metrics lack %s", tc.wantBody)
			}
		})
	}
}

func scrape(ctx context.Context, t *testing.T, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	// The certificate is the one controller-runtime generates for itself;
	// what is under test is who gets in, not the certificate.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // see above
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
