//go:build e2e

package deploy

import (
	"context"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/confighash/confighash/e2e/controlplane"
	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/hashkey"
)

// TestRBACSufficesAtRunTime installs each overlay for real and runs the
// confighash binary with the Deployment's own args, authenticated as the
// manifests' ServiceAccount (a token from the TokenRequest API), so that it
// has exactly the manifests' permissions. There is no kubelet, so the
// binary runs beside the control plane instead of in a pod; everything it
// does against the API is what the pod would do. It must become ready (HMAC
// key, certificate, caBundle, caches), win the leader election, and re-stamp
// a workload with an event when its ConfigMap changes, without a single
// "forbidden" in its log.
func TestRBACSufficesAtRunTime(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	rs, _ := allRenders(t)
	bin, _ := confighashBinary(t)
	c := controlPlane(t)
	installCertManagerCRDs(ctx, t)
	admin := adminClient(t, c)
	for _, r := range rs {
		if !strings.HasPrefix(r.Name, "kustomize/") {
			continue // the chart renders the same objects (TestChartMatchesKustomize)
		}
		t.Run(r.Name, func(t *testing.T) {
			dec := install(ctx, t, r)
			flags := flagsOf(t, dec)

			proc, l := runAsServiceAccount(ctx, t, c, admin, bin, dec)
			// Liveness: a TLS handshake with the binary's own webhook server.
			waitReady(ctx, t, proc, strings.TrimSuffix(l.healthURL, "/readyz")+"/healthz")

			// Leader: the Lease names a holder.
			waitFor(ctx, t, proc, "the leader lease", func(ctx context.Context) (bool, error) {
				l, err := admin.CoordinationV1().Leases(Namespace).Get(ctx, "confighash.dev", metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					return false, nil
				}
				return err == nil && l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "", err
			})

			// The Secrets the binary created on start.
			if s, err := admin.CoreV1().Secrets(Namespace).Get(ctx, flags["hmac-key-secret"], metav1.GetOptions{}); err != nil || len(s.Data[hashkey.DataKey]) == 0 {
				t.Errorf("HMAC key Secret: %v", err)
			}
			if r.Mode.Flag == "self" {
				if _, err := admin.CoreV1().Secrets(Namespace).Get(ctx, flags["cert-secret"], metav1.GetOptions{}); err != nil {
					t.Errorf("certificate Secret: %v", err)
				}
				mwc, err := admin.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, dec.MWC.Name, metav1.GetOptions{})
				if err != nil || len(mwc.Webhooks) == 0 || len(mwc.Webhooks[0].ClientConfig.CABundle) == 0 {
					t.Errorf("caBundle not injected: %v", err)
				}
			}

			restampWorkload(ctx, t, admin, proc, "rbac-"+r.Mode.Overlay)
			checkMetricsAccess(ctx, t, admin, dec, l.metricsURL, metricsRoots(ctx, t, admin, dec, l.certDir))
			stopNeverForbidden(t, proc)
		})
	}
}

// local is a command line for running the Deployment's container here.
type local struct {
	args       []string
	healthURL  string
	metricsURL string
	certDir    string
}

// localArgs turns the Deployment's args into a local command line: the
// same flags, with the pod's namespace filled in, listeners on free
// loopback ports, a temporary cert dir and the ServiceAccount's kubeconfig.
func localArgs(t *testing.T, r *rendered, kubeconfig string) local {
	t.Helper()
	ports := freePorts(t, 3)
	l := local{certDir: filepath.Join(t.TempDir(), "certs")}
	override := map[string]string{
		"webhook-port":              strconv.Itoa(ports[0]),
		"health-probe-bind-address": "127.0.0.1:" + strconv.Itoa(ports[1]),
		"metrics-bind-address":      "127.0.0.1:" + strconv.Itoa(ports[2]),
		"cert-dir":                  l.certDir,
	}
	for _, a := range r.Container.Args {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if v, ok := override[name]; ok {
			a = "--" + name + "=" + v
		}
		l.args = append(l.args, strings.ReplaceAll(a, "$(POD_NAMESPACE)", Namespace))
	}
	l.args = append(l.args, "--webhook-host=127.0.0.1", "--kubeconfig="+kubeconfig)
	l.healthURL = "http://" + override["health-probe-bind-address"] + "/readyz"
	l.metricsURL = "https://" + override["metrics-bind-address"] + "/metrics"
	return l
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// writeSelfSignedPair stands in for cert-manager: it writes a serving
// certificate into dir, as the kubelet would mount it.
func writeSelfSignedPair(t *testing.T, dir string, dnsNames []string) {
	t.Helper()
	pair, err := controlplane.Issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: "confighash-webhook"},
		DNSNames:    dnsNames,
		NotBefore:   time.Now().Add(-time.Minute),
		NotAfter:    time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"tls.crt": pair.CertPEM, "tls.key": pair.KeyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// process is the running binary.
type process struct {
	cmd    *exec.Cmd
	out    *controlplane.SyncBuffer
	exited chan struct{}
	once   sync.Once
}

func startBinary(t *testing.T, bin string, args []string) *process {
	t.Helper()
	p := &process{out: &controlplane.SyncBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	// Dies with the test binary.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.exited) }()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop sends SIGTERM (the binary releases its lease) and waits, then kills.
func (p *process) stop(t *testing.T) {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
			t.Error("confighash did not stop within 30s of SIGTERM")
		}
	})
}

func (p *process) log() string { return p.out.String() }

// waitFor polls cond every half second for a minute, failing the test with
// the binary's log if it does not come true or the binary exits.
func waitFor(ctx context.Context, t *testing.T, p *process, what string, cond wait.ConditionWithContextFunc) {
	t.Helper()
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		select {
		case <-p.exited:
			return false, fmt.Errorf("confighash exited")
		default:
		}
		return cond(ctx)
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v\nconfighash log:\n%s", what, err, p.log())
	}
}

func waitReady(ctx context.Context, t *testing.T, p *process, url string) {
	t.Helper()
	waitFor(ctx, t, p, "/readyz", func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil //nolint:nilerr // not listening yet: polled again
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// restampWorkload opts a namespace in, creates a Deployment reading a
// ConfigMap, changes the ConfigMap and waits for the hook to stamp the
// Deployment and record an event: the hook's whole write path.
func restampWorkload(ctx context.Context, t *testing.T, admin kubernetes.Interface, p *process, ns string) {
	t.Helper()
	_, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name: ns, Labels: map[string]string{contract.InjectionLabel: contract.InjectionEnabled},
	}}, metav1.CreateOptions{})
	// Namespaced mode creates (and labels) its namespaces before its Roles.
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// The webhook is not reachable from the API server here (no pod backs
	// the Service); with failurePolicy Ignore the create goes through
	// unstamped, and the hook stamps it on the first config change.
	cm := createReader(ctx, t, admin, ns)
	// Change the ConfigMap until the hook stamps: its informer may see the
	// Deployment only after the first change.
	n := 0
	lastChange := time.Time{}
	waitFor(ctx, t, p, "the hook to stamp the Deployment", func(ctx context.Context) (bool, error) {
		d, err := admin.AppsV1().Deployments(ns).Get(ctx, "app", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if d.Spec.Template.Annotations[contract.ChecksumAnnotation] != "" {
			return true, nil
		}
		if time.Since(lastChange) > 5*time.Second {
			n++
			cm.Data["n"] = strconv.Itoa(n)
			if cm, err = admin.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
				return false, err
			}
			lastChange = time.Now()
		}
		return false, nil
	})
	waitFor(ctx, t, p, "the re-stamp event", func(ctx context.Context) (bool, error) {
		evs, err := admin.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Regarding.Kind == "Deployment" && e.Regarding.Name == "app" && e.Reason == contract.ReasonConfigChanged {
				return true, nil
			}
		}
		return false, nil
	})
}

func grep(text, word string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(strings.ToLower(l), word) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
