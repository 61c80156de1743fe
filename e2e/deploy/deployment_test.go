package deploy

import (
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Image is the image the manifests run, without its tag.
const Image = "ghcr.io/confighash/confighash"

// flagsOf parses the container's args as `confighash serve` would, checking
// each against the flags the binary really has. Every arg must be a
// --name=value (or a bare boolean --name), so the manifests read the same
// way the binary parses them.
func flagsOf(t *testing.T, r *rendered) map[string]string {
	t.Helper()
	_, known := confighashBinary(t)
	if len(r.Container.Command) > 0 {
		t.Errorf("%s: the container sets a command %v; the image's entrypoint is the binary", r.Name, r.Container.Command)
	}
	flags := map[string]string{}
	for _, arg := range r.Container.Args {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if !strings.HasPrefix(arg, "--") {
			t.Errorf("%s: arg %q is not a --flag", r.Name, arg)
			continue
		}
		f, ok := known[name]
		if !ok {
			t.Errorf("%s: arg %q: confighash has no flag --%s", r.Name, arg, name)
			continue
		}
		if _, dup := flags[name]; dup {
			t.Errorf("%s: --%s given twice", r.Name, name)
		}
		switch {
		case f.Type == "" && !hasValue:
			value = "true"
		case f.Type == "" && value != "true" && value != "false":
			t.Errorf("%s: arg %q: --%s is a boolean", r.Name, arg, name)
		case f.Type != "" && !hasValue:
			t.Errorf("%s: arg %q: give the value as --%s=VALUE", r.Name, arg, name)
		}
		if err := checkFlagValue(f.Type, value); err != nil {
			t.Errorf("%s: arg %q: %v", r.Name, arg, err)
		}
		flags[name] = value
	}
	return flags
}

func checkFlagValue(typ, value string) error {
	var err error
	switch typ {
	case "int":
		_, err = strconv.Atoi(value)
	case "float":
		_, err = strconv.ParseFloat(value, 64)
	case "duration":
		_, err = time.ParseDuration(value)
	}
	return err
}

// need returns the value of a flag the manifests must spell out.
func need(t *testing.T, r *rendered, flags map[string]string, name string) string {
	t.Helper()
	v, ok := flags[name]
	if !ok {
		t.Errorf("%s: the Deployment does not pass --%s", r.Name, name)
	}
	return v
}

// containerPort resolves a port (by name or number) of the container.
func containerPort(c *corev1.Container, p intstr.IntOrString) (int32, bool) {
	for _, cp := range c.Ports {
		if (p.Type == intstr.String && cp.Name == p.StrVal) || (p.Type == intstr.Int && cp.ContainerPort == p.IntVal) {
			return cp.ContainerPort, true
		}
	}
	return 0, false
}

func portOfAddr(t *testing.T, r *rendered, flag, addr string) int32 {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Errorf("%s: --%s=%s: %v", r.Name, flag, addr, err)
		return 0
	}
	n, err := strconv.ParseInt(port, 10, 32)
	if err != nil {
		t.Errorf("%s: --%s=%s: %v", r.Name, flag, addr, err)
	}
	return int32(n)
}

// TestDeploymentMatchesBinary checks the Deployment's args against the
// binary's flags, and that what they name (Service, webhook configuration,
// ports, cert dir) is what the other objects provide.
func TestDeploymentMatchesBinary(t *testing.T) {
	for _, r := range decodedRenders(t) {
		t.Run(r.Name, func(t *testing.T) {
			flags := flagsOf(t, r)
			c := r.Container
			podSpec := &r.Deployment.Spec.Template.Spec

			if flags["leader-elect"] != "true" {
				t.Error("--leader-elect is not set: every replica would run the config-update hook")
			}
			if got := need(t, r, flags, "cert-mode"); got != r.Mode.Flag {
				t.Errorf("--cert-mode=%s, want %s", got, r.Mode.Flag)
			}
			switch ns := need(t, r, flags, "namespace"); ns {
			case Namespace:
			case "$(POD_NAMESPACE)":
				if !hasEnvFromField(c, "POD_NAMESPACE", "metadata.namespace") {
					t.Error("--namespace=$(POD_NAMESPACE) but POD_NAMESPACE is not the pod's metadata.namespace")
				}
			default:
				t.Errorf("--namespace=%s, want %s or $(POD_NAMESPACE)", ns, Namespace)
			}
			if got := need(t, r, flags, "service-name"); got != r.Service.Name {
				t.Errorf("--service-name=%s but the Service is %s", got, r.Service.Name)
			}
			if got := need(t, r, flags, "webhook-config-name"); got != r.MWC.Name {
				t.Errorf("--webhook-config-name=%s but the MutatingWebhookConfiguration is %s", got, r.MWC.Name)
			}

			// Ports: webhook (through the Service), probes, metrics.
			webhookPort, _ := strconv.Atoi(need(t, r, flags, "webhook-port"))
			// The webhook first (the webhook configuration's port), then
			// the metrics for a ServiceMonitor: one Service, so that the
			// certificate's SANs (its DNS names) are what a scraper verifies.
			if len(r.Service.Spec.Ports) != 2 {
				t.Fatalf("the Service has %d ports, want 2 (webhook, metrics)", len(r.Service.Spec.Ports))
			}
			if got, ok := containerPort(c, r.Service.Spec.Ports[0].TargetPort); !ok || int(got) != webhookPort {
				t.Errorf("the Service targets container port %v (%d), but --webhook-port=%d", r.Service.Spec.Ports[0].TargetPort.String(), got, webhookPort)
			}
			health := portOfAddr(t, r, "health-probe-bind-address", need(t, r, flags, "health-probe-bind-address"))
			for name, probe := range map[string]*corev1.Probe{"/healthz": c.LivenessProbe, "/readyz": c.ReadinessProbe} {
				if probe == nil || probe.HTTPGet == nil {
					t.Errorf("no HTTP probe for %s", name)
					continue
				}
				if probe.HTTPGet.Path != name {
					t.Errorf("probe path %s, want %s", probe.HTTPGet.Path, name)
				}
				if got, ok := containerPort(c, probe.HTTPGet.Port); !ok || got != health {
					t.Errorf("probe %s on port %s (%d), but --health-probe-bind-address serves %d", name, probe.HTTPGet.Port.String(), got, health)
				}
			}
			metrics := portOfAddr(t, r, "metrics-bind-address", need(t, r, flags, "metrics-bind-address"))
			if got, ok := containerPort(c, intstr.FromString("metrics")); !ok || got != metrics {
				t.Errorf("container port metrics is %d, but --metrics-bind-address serves %d", got, metrics)
			}
			if got, ok := containerPort(c, r.Service.Spec.Ports[1].TargetPort); !ok || got != metrics || r.Service.Spec.Ports[1].Name != "https-metrics" {
				t.Errorf("the Service's second port %s targets %v (%d), want https-metrics on the metrics port %d", r.Service.Spec.Ports[1].Name, r.Service.Spec.Ports[1].TargetPort.String(), got, metrics)
			}

			// The cert dir: written by the binary, or mounted from cert-manager's Secret.
			certDir := need(t, r, flags, "cert-dir")
			mount, vol := mountOf(c, podSpec, certDir)
			switch r.Mode.Flag {
			case "self":
				need(t, r, flags, "cert-secret")
				// The metrics' CA, for scrapers (RBAC rules name it).
				if got := need(t, r, flags, "ca-bundle-configmap"); got != "confighash-ca-bundle" {
					t.Errorf("--ca-bundle-configmap=%s, want confighash-ca-bundle", got)
				}
				if vol == nil || vol.EmptyDir == nil || mount.ReadOnly {
					t.Errorf("--cert-dir=%s is not on a writable emptyDir: the binary writes its certificate there", certDir)
				}
			case "external":
				serving := servingCert(t, r)
				if vol == nil || vol.Secret == nil || serving == nil || vol.Secret.SecretName != serving.Spec.SecretName || mount.MountPath != filepath.Clean(certDir) {
					t.Errorf("--cert-dir=%s is not the mount of the serving Certificate's Secret", certDir)
				}
			}

			// Every other writable path is an emptyDir; the root file system is read-only.
			for _, m := range c.VolumeMounts {
				_, v := mountOf(c, podSpec, m.MountPath)
				if v == nil {
					t.Errorf("volume mount %s has no volume", m.MountPath)
				}
			}
		})
	}
}

func hasEnvFromField(c *corev1.Container, name, fieldPath string) bool {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == fieldPath {
			return true
		}
	}
	return false
}

// mountOf finds the deepest volume mount holding path, and its volume.
func mountOf(c *corev1.Container, spec *corev1.PodSpec, path string) (*corev1.VolumeMount, *corev1.Volume) {
	path = filepath.Clean(path)
	var best *corev1.VolumeMount
	for i := range c.VolumeMounts {
		m := &c.VolumeMounts[i]
		mp := filepath.Clean(m.MountPath)
		if (path == mp || strings.HasPrefix(path, mp+"/")) && (best == nil || len(mp) > len(best.MountPath)) {
			best = m
		}
	}
	if best == nil {
		return nil, nil
	}
	for i := range spec.Volumes {
		if spec.Volumes[i].Name == best.Name {
			return best, &spec.Volumes[i]
		}
	}
	return best, nil
}

// TestDeploymentIsHardened checks the availability and security settings
// the manifests promise.
func TestDeploymentIsHardened(t *testing.T) {
	for _, r := range decodedRenders(t) {
		t.Run(r.Name, func(t *testing.T) {
			d := r.Deployment
			spec := &d.Spec.Template.Spec
			c := r.Container
			podLabels := labels.Set(d.Spec.Template.Labels)

			if d.Spec.Replicas == nil || *d.Spec.Replicas != 2 {
				t.Errorf("replicas %v, want 2", d.Spec.Replicas)
			}
			if sel := d.Spec.Selector; sel == nil || !labels.SelectorFromSet(sel.MatchLabels).Matches(podLabels) || len(sel.MatchExpressions) > 0 {
				t.Errorf("the Deployment's selector %v does not select its pods %v", sel, podLabels)
			}
			if !labels.SelectorFromSet(r.Service.Spec.Selector).Matches(podLabels) || len(r.Service.Spec.Selector) == 0 {
				t.Errorf("the Service's selector %v does not select the pods %v", r.Service.Spec.Selector, podLabels)
			}
			if p := r.PDB.Spec; p.MinAvailable == nil || p.MinAvailable.String() != "1" || p.Selector == nil ||
				!labels.SelectorFromSet(p.Selector.MatchLabels).Matches(podLabels) {
				t.Errorf("PodDisruptionBudget: minAvailable %v, selector %v; want 1 of the pods %v", p.MinAvailable, p.Selector, podLabels)
			}
			if spec.ServiceAccountName != r.SA.Name {
				t.Errorf("serviceAccountName %q, but the ServiceAccount is %q", spec.ServiceAccountName, r.SA.Name)
			}
			if got := ImageRepository(c.Image); got != Image {
				t.Errorf("image %s, want %s:TAG", c.Image, Image)
			}
			if c.Image == Image {
				t.Errorf("image %s has no tag", c.Image)
			}

			spread := false
			for _, tsc := range spec.TopologySpreadConstraints {
				if tsc.TopologyKey == "kubernetes.io/hostname" && tsc.LabelSelector != nil &&
					labels.SelectorFromSet(tsc.LabelSelector.MatchLabels).Matches(podLabels) {
					spread = true
				}
			}
			if !spread {
				t.Error("no topologySpreadConstraint spreads the pods over kubernetes.io/hostname")
			}

			for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
				if _, ok := c.Resources.Requests[res]; !ok {
					t.Errorf("no %s request", res)
				}
				if _, ok := c.Resources.Limits[res]; !ok {
					t.Errorf("no %s limit", res)
				}
			}

			psc, csc := spec.SecurityContext, c.SecurityContext
			if psc == nil || csc == nil {
				t.Fatal("pod or container securityContext missing")
			}
			check := func(what string, ok bool) {
				if !ok {
					t.Errorf("securityContext: want %s", what)
				}
			}
			check("runAsNonRoot", psc.RunAsNonRoot != nil && *psc.RunAsNonRoot)
			check("runAsUser 65532", psc.RunAsUser != nil && *psc.RunAsUser == 65532)
			check("seccompProfile RuntimeDefault", psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault)
			check("readOnlyRootFilesystem", csc.ReadOnlyRootFilesystem != nil && *csc.ReadOnlyRootFilesystem)
			check("allowPrivilegeEscalation false", csc.AllowPrivilegeEscalation != nil && !*csc.AllowPrivilegeEscalation)
			check("capabilities drop ALL, add none", csc.Capabilities != nil && len(csc.Capabilities.Add) == 0 &&
				len(csc.Capabilities.Drop) == 1 && csc.Capabilities.Drop[0] == "ALL")
			check("no privileged container", csc.Privileged == nil || !*csc.Privileged)
			if _, vol := mountOf(c, spec, "/tmp"); vol == nil || vol.EmptyDir == nil {
				t.Error("/tmp is not an emptyDir")
			}
		})
	}
}
