//go:build e2e

package deploy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
)

// servedCerts are the webhook's serving certificates as a client sees
// them on the node: through the Service's ClusterIP (kube-proxy routes it
// from the host too) and at each pod's own address, verified against the
// caBundle and the Service's DNS name as the apiserver verifies them.
type servedCerts struct {
	// Service is what one connection to the Service got.
	Service *x509.Certificate
	// Pods is what each pod served, by pod name.
	Pods map[string]*x509.Certificate
}

// allServe reports whether the Service and every pod served the
// certificate with this serial number.
func (s servedCerts) allServe(serial string) bool {
	if s.Service == nil || s.Service.SerialNumber.String() != serial || len(s.Pods) == 0 {
		return false
	}
	for _, c := range s.Pods {
		if c.SerialNumber.String() != serial {
			return false
		}
	}
	return true
}

// readServedCerts dials the webhook Service svc and its Running pods
// (selected by the Service's selector, at the container port the Service
// targets by name).
func readServedCerts(ctx context.Context, admin kubernetes.Interface, svc *corev1.Service, caBundle []byte) (servedCerts, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caBundle) {
		return servedCerts{}, errors.New("the caBundle holds no certificate")
	}
	serverName := svc.Name + "." + svc.Namespace + ".svc"
	port := svc.Spec.Ports[0]
	var out servedCerts
	var err error
	if out.Service, err = dialServing(ctx, net.JoinHostPort(svc.Spec.ClusterIP, strconv.Itoa(int(port.Port))), serverName, roots); err != nil {
		return out, fmt.Errorf("through the Service: %w", err)
	}
	pods, err := admin.CoreV1().Pods(svc.Namespace).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: svc.Spec.Selector})})
	if err != nil {
		return out, fmt.Errorf("listing the webhook's pods: %w", err)
	}
	out.Pods = map[string]*x509.Certificate{}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil || p.Status.PodIP == "" {
			continue
		}
		target, ok := podPort(p, port.TargetPort)
		if !ok {
			return out, fmt.Errorf("pod %s has no container port %s", p.Name, port.TargetPort.String())
		}
		if out.Pods[p.Name], err = dialServing(ctx, net.JoinHostPort(p.Status.PodIP, strconv.Itoa(int(target))), serverName, roots); err != nil {
			return out, fmt.Errorf("at pod %s: %w", p.Name, err)
		}
	}
	return out, nil
}

// podPort is the container port of the pod that the Service's target
// port names or numbers.
func podPort(p corev1.Pod, target intstr.IntOrString) (int32, bool) {
	for i := range p.Spec.Containers {
		if port, ok := containerPort(&p.Spec.Containers[i], target); ok {
			return port, true
		}
	}
	return 0, false
}

// dialServing makes a verified TLS handshake and returns the leaf.
func dialServing(ctx context.Context, addr, serverName string, roots *x509.CertPool) (*x509.Certificate, error) {
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 2 * time.Second}, Config: &tls.Config{RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12}}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	certs := conn.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return nil, errors.New("no certificate served")
	}
	return certs[0], nil
}

// leafOf parses the first certificate of a PEM bundle (tls.crt).
func leafOf(pemBytes []byte) (*x509.Certificate, error) {
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}
