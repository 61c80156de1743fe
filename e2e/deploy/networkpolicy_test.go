package deploy

import (
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestNetworkPolicyAdmitsOnlyTheServedPorts: every render ships one
// NetworkPolicy that isolates confighash's pods for ingress and opens the
// webhook port and the metrics port, the latter only to the configured
// scraper. The health port needs no rule (the kubelet probes from the
// node, which NetworkPolicy always allows), and no other port is opened.
func TestNetworkPolicyAdmitsOnlyTheServedPorts(t *testing.T) {
	for _, r := range decodedRenders(t) {
		t.Run(r.Name, func(t *testing.T) {
			if len(r.NetPols) != 1 {
				t.Fatalf("%d NetworkPolicies rendered, want 1", len(r.NetPols))
			}
			np := r.NetPols[0]
			checkSelectsConfighash(t, np, r.Deployment.Spec.Template.Labels)
			if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
				t.Errorf("policyTypes %v, want [Ingress]: egress must stay open for the apiserver", np.Spec.PolicyTypes)
			}
			rules := rulesByPort(t, np, r.Container)
			webhookPort, _ := containerPort(r.Container, r.Service.Spec.Ports[0].TargetPort)
			metricsPort := portNamed(r.Container, "metrics")
			if len(rules) != 2 || rules[webhookPort] == nil || rules[metricsPort] == nil {
				t.Fatalf("rules open ports %v, want exactly the webhook port %d and the metrics port %d", slices.Sorted(maps.Keys(rules)), webhookPort, metricsPort)
			}
			// The apiserver cannot be selected portably: the default admits
			// any source on the webhook port (docs/operations.md, NetworkPolicy).
			if from := rules[webhookPort].From; len(from) != 0 {
				t.Errorf("webhook port admits only %v by default; most apiservers would be locked out", from)
			}
			wantScraper := networkingv1.NetworkPolicyPeer{
				NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}},
				PodSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"app.kubernetes.io/name": "prometheus"}},
			}
			if from := rules[metricsPort].From; len(from) != 1 || !peerEqual(from[0], wantScraper) {
				t.Errorf("metrics port admits %v, want only the scraper %v", from, wantScraper)
			}
		})
	}
}

// TestChartNetworkPolicyValues: networkPolicy.webhookFrom narrows the
// webhook port to the apiserver's addresses, metricsFrom names the
// scraper, and enabled=false renders none.
func TestChartNetworkPolicyValues(t *testing.T) {
	apiserver := map[string]any{"ipBlock": map[string]any{"cidr": "10.0.0.0/24"}}
	scraper := map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "observability"}}}
	objs := helmTemplate(t, Namespace, map[string]any{"createNamespace": true, "networkPolicy": map[string]any{
		"webhookFrom": []any{apiserver}, "metricsFrom": []any{scraper},
	}})
	r := decode(t, Render{Name: "helm/networkPolicy", Mode: CertModes[0], Objects: objs})
	if len(r.NetPols) != 1 {
		t.Fatalf("%d NetworkPolicies, want 1", len(r.NetPols))
	}
	rules := rulesByPort(t, r.NetPols[0], r.Container)
	webhookPort, _ := containerPort(r.Container, r.Service.Spec.Ports[0].TargetPort)
	if from := rules[webhookPort].From; len(from) != 1 || from[0].IPBlock == nil || from[0].IPBlock.CIDR != "10.0.0.0/24" {
		t.Errorf("webhook port admits %v, want the ipBlock 10.0.0.0/24", from)
	}
	if from := rules[portNamed(r.Container, "metrics")].From; len(from) != 1 || from[0].NamespaceSelector == nil ||
		from[0].NamespaceSelector.MatchLabels["kubernetes.io/metadata.name"] != "observability" || from[0].PodSelector != nil {
		t.Errorf("metrics port admits %v, want all pods of namespace observability", from)
	}

	off := decode(t, Render{Name: "helm/networkPolicy-off", Mode: CertModes[0],
		Objects: helmTemplate(t, Namespace, map[string]any{"createNamespace": true, "networkPolicy": map[string]any{"enabled": false}})})
	if len(off.NetPols) != 0 {
		t.Errorf("networkPolicy.enabled=false rendered %d NetworkPolicies", len(off.NetPols))
	}
}

func checkSelectsConfighash(t *testing.T, np *networkingv1.NetworkPolicy, podLabels map[string]string) {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(podLabels)) {
		t.Errorf("podSelector %v does not select confighash's pods %v (%v)", np.Spec.PodSelector, podLabels, err)
	}
}

// rulesByPort maps each container port a rule opens to its rule. A rule
// without ports (all ports) or naming a port the container lacks fails.
func rulesByPort(t *testing.T, np *networkingv1.NetworkPolicy, c *corev1.Container) map[int32]*networkingv1.NetworkPolicyIngressRule {
	t.Helper()
	out := map[int32]*networkingv1.NetworkPolicyIngressRule{}
	for i := range np.Spec.Ingress {
		rule := &np.Spec.Ingress[i]
		if len(rule.Ports) == 0 {
			t.Errorf("ingress rule %d opens every port", i)
		}
		for _, p := range rule.Ports {
			if p.Port == nil {
				t.Errorf("ingress rule %d opens every port", i)
				continue
			}
			n, ok := containerPort(c, *p.Port)
			if !ok {
				t.Errorf("ingress rule %d opens port %s, which the container does not have", i, p.Port.String())
				continue
			}
			if out[n] != nil {
				t.Errorf("port %d is opened by two rules", n)
			}
			out[n] = rule
		}
	}
	return out
}

func portNamed(c *corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return -1
}

func peerEqual(a, b networkingv1.NetworkPolicyPeer) bool {
	return a.IPBlock == nil && b.IPBlock == nil &&
		selectorText(a.NamespaceSelector) == selectorText(b.NamespaceSelector) &&
		selectorText(a.PodSelector) == selectorText(b.PodSelector)
}

func selectorText(s *metav1.LabelSelector) string {
	if s == nil {
		return "<none>"
	}
	sel, err := metav1.LabelSelectorAsSelector(s)
	if err != nil {
		return err.Error()
	}
	return sel.String()
}
