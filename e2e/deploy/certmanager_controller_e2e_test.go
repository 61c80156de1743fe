//go:build e2e

package deploy

import (
	"bytes"
	"context"
	"crypto/x509"
	"testing"
	"time"

	cmapi "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	cmmeta "github.com/cert-manager/cert-manager/pkg/apis/meta/v1"
	cmclient "github.com/cert-manager/cert-manager/pkg/client/clientset/versioned"
	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/e2e/framework"
)

// certManagerOverlay is the overlay this spec deploys as shipped.
const certManagerOverlay = "manifests/overlays/cert-manager"

// The renewal schedule the spec sets on the serving Certificate: one hour,
// renewed two minutes after each issuance (an hour is the shortest duration
// cert-manager's webhook accepts). Two minutes leave the kubelet time to
// refresh the mounted Secret (its pod sync runs every minute) before the
// next renewal.
const (
	renewalDuration    = time.Hour
	renewalRenewBefore = 58 * time.Minute
)

// TestCertManagerControllerIssuesAndRenews deploys the cert-manager overlay
// on a local node with cert-manager's own controllers issuing its chain
// (selfSigned Issuer, CA Certificate, CA Issuer, serving Certificate) and
// cert-manager's cainjector filling in the caBundle, both run in this
// process from the cert-manager module. confighash must become Ready
// through its probes, serve the issued certificate through its Service and
// stamp. Then the serving Certificate is given a short duration: cert-manager
// re-issues it for the changed spec and renews it again on schedule, and
// through both confighash must serve each new certificate without a
// restart while admissions keep flowing, none of which may fail open by
// the apiserver's own count.
func TestCertManagerControllerIssuesAndRenews(t *testing.T) {
	specBegin := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	// Its clean-up is registered first, so it runs last: after the
	// in-process controllers have stopped.
	env := startNode(ctx, t)
	admin, err := kubernetes.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := cmclient.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	crds, err := certManagerCRDDir(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.Run(ctx, "", "apply", "--server-side", "--field-manager=confighash-deploy-e2e", "-f", crds); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Run(ctx, "", "wait", "--for=condition=Established", "--timeout=2m", "-f", crds); err != nil {
		t.Fatal(err)
	}

	r := decode(t, rendersByName(t)["kustomize/cert-manager"])
	serving := servingCert(t, r)
	if serving == nil || r.MWC == nil || r.Service == nil {
		t.Fatal("the cert-manager overlay renders no serving Certificate, webhook configuration or Service")
	}
	var cmLog, injLog controlplane.SyncBuffer
	startCertManagerController(t, env.Kubeconfig, &cmLog)
	startCAInjector(t, env.Config, &injLog)

	begin := time.Now()
	if err := env.Deploy(ctx, certManagerOverlay); err != nil {
		t.Fatal(err)
	}
	t.Logf("confighash Ready through its probes %s after the overlay was applied", time.Since(begin).Round(time.Millisecond))

	// The chain, as cert-manager issued it.
	for _, c := range r.Certs {
		waitCertificateReady(ctx, t, cm, c.Namespace, c.Name)
	}
	crs, err := cm.CertmanagerV1().CertificateRequests(serving.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(crs.Items) != len(r.Certs) {
		t.Errorf("%d CertificateRequests, want one per Certificate (%d)", len(crs.Items), len(r.Certs))
	}
	for _, cr := range crs.Items {
		if !crCondition(cr, cmapi.CertificateRequestConditionApproved) || !crCondition(cr, cmapi.CertificateRequestConditionReady) {
			t.Errorf("CertificateRequest %s is not approved and issued: %+v", cr.Name, cr.Status.Conditions)
		}
	}
	secret, err := admin.CoreV1().Secrets(serving.Namespace).Get(ctx, serving.Spec.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	caPEM := secret.Data["ca.crt"]
	leaf := verifiedLeaf(t, secret, caPEM)
	if leaf.Issuer.CommonName != "confighash-webhook-ca" {
		t.Errorf("the serving certificate is issued by %q, want the overlay's CA", leaf.Issuer.CommonName)
	}
	waitForCABundle(ctx, t, admin, r.MWC.Name, len(r.MWC.Webhooks), caPEM)
	svc, err := admin.CoreV1().Services(r.Service.Namespace).Get(ctx, r.Service.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitServed(ctx, t, admin, svc, caPEM, leaf, time.Minute)

	// It stamps through its Service.
	ns := env.NewNamespace(t, true)
	env.Create(t, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "cfg"}, Data: map[string]string{"k": "v"}})
	first := probeDeployment(ns, "reader", "cfg")
	env.Create(t, first)
	if stamp := env.StampOf(t, first); stamp == "" {
		t.Fatal("the webhook did not stamp a Deployment created in a labelled namespace")
	}

	// The renewal.
	podsBefore := confighashPods(ctx, t, admin)
	before, err := readWebhookAdmissions(ctx, admin, r.MWC.Webhooks[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := cm.CertmanagerV1().Certificates(serving.Namespace).Get(ctx, serving.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	revision := revisionOf(cert)
	loop := startAdmissionLoop(ctx, env.Client, ns, "cfg", 250*time.Millisecond)
	renewBegin := time.Now()
	cert.Spec.Duration = &metav1.Duration{Duration: renewalDuration}
	cert.Spec.RenewBefore = &metav1.Duration{Duration: renewalRenewBefore}
	if _, err := cm.CertmanagerV1().Certificates(serving.Namespace).Update(ctx, cert, metav1.UpdateOptions{}); err != nil {
		loop.Stop()
		t.Fatalf("shortening the serving Certificate's duration: %v", err)
	}

	// 1: re-issued because the spec changed.
	reissued, reissuedAt := waitIssued(ctx, t, cm, admin, serving, revision+1, time.Minute)
	t.Logf("re-issued for the new duration %s after the change: serial %s, notBefore %s, notAfter %s",
		reissuedAt.Sub(renewBegin).Round(time.Millisecond), reissued.SerialNumber, reissued.NotBefore.Format(time.RFC3339), reissued.NotAfter.Format(time.RFC3339))
	if got := reissued.NotAfter.Sub(reissued.NotBefore); got != renewalDuration {
		t.Errorf("re-issued for %s, want the new duration %s", got, renewalDuration)
	}
	servedAt := waitServed(ctx, t, admin, svc, caPEM, reissued, renewalDuration-renewalRenewBefore)
	t.Logf("re-issued certificate served by the Service and every pod %s after its Secret changed", servedAt.Sub(reissuedAt).Round(time.Millisecond))

	// 2: renewed on schedule.
	renewed, renewedAt := waitIssued(ctx, t, cm, admin, serving, revision+2, renewalDuration-renewalRenewBefore+time.Minute)
	if due := reissued.NotAfter.Add(-renewalRenewBefore); renewed.NotBefore.Before(due.Add(-5 * time.Second)) {
		t.Errorf("renewed at %s, before it was due (%s): not a scheduled renewal", renewed.NotBefore, due)
	}
	t.Logf("renewed on schedule: serial %s, notBefore %s", renewed.SerialNumber, renewed.NotBefore.Format(time.RFC3339))
	servedAt = waitServed(ctx, t, admin, svc, caPEM, renewed, renewalDuration-renewalRenewBefore)
	t.Logf("renewed certificate served by the Service and every pod %s after its Secret changed", servedAt.Sub(renewedAt).Round(time.Millisecond))
	loop.Stop()

	// The CA did not change, so the caBundle, which the cainjector keeps
	// from the serving Certificate's Secret, is the same CA.
	secret, err = admin.CoreV1().Secrets(serving.Namespace).Get(ctx, serving.Spec.SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(secret.Data["ca.crt"], caPEM) {
		t.Error("the renewal changed the CA; the overlay's CA keeps its key and is not renewed here")
	}
	waitForCABundle(ctx, t, admin, r.MWC.Name, len(r.MWC.Webhooks), secret.Data["ca.crt"])

	after, err := readWebhookAdmissions(ctx, admin, r.MWC.Webhooks[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	calls, failOpen := after.Calls-before.Calls, after.FailOpen-before.FailOpen
	t.Logf("during the renewal (%s): %d Deployments created, %d unstamped, %d failed writes; the apiserver counted %.0f webhook calls, %.0f failed open",
		time.Since(renewBegin).Round(time.Millisecond), loop.Creates, loop.Unstamped, len(loop.Errors), calls, failOpen)
	if failOpen != 0 {
		t.Errorf("%.0f admissions failed open during the renewal", failOpen)
	}
	if loop.Unstamped != 0 || len(loop.Errors) != 0 {
		t.Errorf("%d Deployments created unstamped, %d writes failed (first: %v)", loop.Unstamped, len(loop.Errors), firstErr(loop.Errors))
	}
	if loop.Creates == 0 || calls < float64(loop.Creates) {
		t.Errorf("%d Deployments created, %.0f webhook calls: the renewal was not crossed by admissions", loop.Creates, calls)
	}

	// Without a restart.
	podsAfter := confighashPods(ctx, t, admin)
	if len(podsAfter) != len(podsBefore) {
		t.Errorf("confighash pods before %v, after %v", podsBefore, podsAfter)
	}
	for uid, restarts := range podsBefore {
		if got, ok := podsAfter[uid]; !ok || got != restarts {
			t.Errorf("pod %s: restarts %d before, %d after (present after: %v)", uid, restarts, got, ok)
		}
	}

	// The counter is live: with no webhook pod to call, one create fails
	// open, and the apiserver counts it.
	var zero int32
	if _, err := admin.AppsV1().Deployments(framework.Namespace).UpdateScale(ctx, "confighash", &autoscalingv1.Scale{
		ObjectMeta: metav1.ObjectMeta{Namespace: framework.Namespace, Name: "confighash"},
		Spec:       autoscalingv1.ScaleSpec{Replicas: zero},
	}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		return len(confighashPods(ctx, t, admin)) == 0, nil
	})
	if err != nil {
		t.Fatalf("confighash's pods did not go: %v", err)
	}
	unserved := probeDeployment(ns, "unserved", "cfg")
	env.Create(t, unserved)
	if stamp, err := framework.TemplateStamp(unserved); err != nil || stamp != "" {
		t.Errorf("created with no webhook pod, yet stamped %q (%v)", stamp, err)
	}
	down, err := readWebhookAdmissions(ctx, admin, r.MWC.Webhooks[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("with no webhook pod, one create: %.0f failed open by the apiserver's count", down.FailOpen-after.FailOpen)
	if down.FailOpen-after.FailOpen < 1 {
		t.Errorf("a create with no webhook pod counted %.0f fail-opens, want at least 1: the counter this spec reads is not live", down.FailOpen-after.FailOpen)
	}
	t.Logf("spec took %s", time.Since(specBegin).Round(time.Second))
}

// waitCertificateReady waits for the Certificate's Ready condition.
func waitCertificateReady(ctx context.Context, t *testing.T, cm cmclient.Interface, ns, name string) {
	t.Helper()
	var last *cmapi.Certificate
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		c, err := cm.CertmanagerV1().Certificates(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = c
		for _, cond := range c.Status.Conditions {
			if cond.Type == cmapi.CertificateConditionReady && cond.Status == cmmeta.ConditionTrue {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("Certificate %s/%s never became Ready (status %+v): %v", ns, name, last.Status, err)
	}
}

// waitIssued waits until the Certificate's revision reaches revision and
// is Ready, and returns the Secret's new leaf and when it was first seen.
func waitIssued(ctx context.Context, t *testing.T, cm cmclient.Interface, admin kubernetes.Interface, c *cmapi.Certificate, revision int, timeout time.Duration) (*x509.Certificate, time.Time) {
	t.Helper()
	var leaf *x509.Certificate
	var seen time.Time
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		live, err := cm.CertmanagerV1().Certificates(c.Namespace).Get(ctx, c.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if revisionOf(live) < revision {
			return false, nil
		}
		s, err := admin.CoreV1().Secrets(c.Namespace).Get(ctx, c.Spec.SecretName, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if leaf, err = leafOf(s.Data[corev1.TLSCertKey]); err != nil {
			return false, err
		}
		seen = time.Now()
		return true, nil
	})
	if err != nil {
		t.Fatalf("Certificate %s never reached revision %d: %v", c.Name, revision, err)
	}
	return leaf, seen
}

// waitServed waits until the Service and every pod serve want, and returns
// when they first did.
func waitServed(ctx context.Context, t *testing.T, admin kubernetes.Interface, svc *corev1.Service, caPEM []byte, want *x509.Certificate, timeout time.Duration) time.Time {
	t.Helper()
	var last servedCerts
	var lastErr error
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		last, lastErr = readServedCerts(ctx, admin, svc, caPEM)
		return lastErr == nil && last.allServe(want.SerialNumber.String()), nil
	})
	if err != nil {
		t.Fatalf("serial %s was not served by the Service and every pod within %s: last error %v, served %s", want.SerialNumber, timeout, lastErr, describeServed(last))
	}
	return time.Now()
}

func describeServed(s servedCerts) string {
	var b bytes.Buffer
	if s.Service != nil {
		b.WriteString("service=" + s.Service.SerialNumber.String())
	}
	for name, c := range s.Pods {
		b.WriteString(" " + name + "=" + c.SerialNumber.String())
	}
	return b.String()
}

// verifiedLeaf is the Secret's leaf, which must verify against ca for the
// webhook's Service name.
func verifiedLeaf(t *testing.T, s *corev1.Secret, caPEM []byte) *x509.Certificate {
	t.Helper()
	leaf, err := leafOf(s.Data[corev1.TLSCertKey])
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("the serving Secret's ca.crt holds no certificate")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: leaf.DNSNames[0]}); err != nil {
		t.Fatalf("the serving certificate does not verify against its ca.crt: %v", err)
	}
	return leaf
}

// confighashPods maps each confighash pod's UID to its containers' restarts.
func confighashPods(ctx context.Context, t *testing.T, admin kubernetes.Interface) map[types.UID]int32 {
	t.Helper()
	pods, err := admin.CoreV1().Pods(framework.Namespace).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=confighash"})
	if err != nil {
		t.Fatal(err)
	}
	out := map[types.UID]int32{}
	for _, p := range pods.Items {
		var n int32
		for _, s := range p.Status.ContainerStatuses {
			n += s.RestartCount
		}
		out[p.UID] = n
	}
	return out
}

func revisionOf(c *cmapi.Certificate) int {
	if c.Status.Revision == nil {
		return 0
	}
	return *c.Status.Revision
}

func crCondition(cr cmapi.CertificateRequest, typ cmapi.CertificateRequestConditionType) bool {
	for _, c := range cr.Status.Conditions {
		if c.Type == typ && c.Status == cmmeta.ConditionTrue {
			return true
		}
	}
	return false
}

func firstErr(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}
