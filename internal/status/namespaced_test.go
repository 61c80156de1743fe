package status

import (
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/injection"
)

// TestInjectionOfNamespaced: status tells a labelled namespace outside a
// namespaced-mode confighash's list from one it serves.
func TestInjectionOfNamespaced(t *testing.T) {
	labelled := map[string]string{contract.InjectionLabel: contract.InjectionEnabled}
	tests := map[string]struct {
		ns     string
		served []string
		want   InjectionState
		reason string
	}{
		"listed":                   {ns: "team-a", served: []string{"team-a"}, want: InjectionOn, reason: "is labelled"},
		"labelled, not listed":     {ns: "shop", served: []string{"team-a"}, want: InjectionOff, reason: "--namespaces=team-a"},
		"cluster-wide, same label": {ns: "shop", want: InjectionOn, reason: "is labelled"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := injectionOf(tc.ns, labelled, nil, nil, "ch", tc.served...)
			if got.State != tc.want || !strings.Contains(got.Reason, tc.reason) {
				t.Errorf("got %+v, want %s with a reason with %q", got, tc.want, tc.reason)
			}
		})
	}
}

// TestCheckSelectorNamespaced: --check-install accepts a namespaced
// install's selector when told its list, and refuses a mismatch.
func TestCheckSelectorNamespaced(t *testing.T) {
	namespaced := injection.New("confighash-system", "team-a", "team-b").NamespaceSelector()
	clusterWide := injection.New("confighash-system").NamespaceSelector()
	tests := map[string]struct {
		installed *admissionregistrationv1.MutatingWebhook
		served    []string
		wantErr   string
	}{
		"namespaced install, told the list":         {installed: &admissionregistrationv1.MutatingWebhook{NamespaceSelector: namespaced}, served: []string{"team-a", "team-b"}},
		"namespaced install, list in another order": {installed: &admissionregistrationv1.MutatingWebhook{NamespaceSelector: namespaced}, served: []string{"team-b", "team-a"}},
		"namespaced install, not told":              {installed: &admissionregistrationv1.MutatingWebhook{NamespaceSelector: namespaced}, wantErr: "excluding kube-system"},
		"namespaced install, another list":          {installed: &admissionregistrationv1.MutatingWebhook{NamespaceSelector: namespaced}, served: []string{"team-a"}, wantErr: "only team-a"},
		"cluster-wide install":                      {installed: &admissionregistrationv1.MutatingWebhook{NamespaceSelector: clusterWide}},
		"cluster-wide install, told a list":         {installed: &admissionregistrationv1.MutatingWebhook{NamespaceSelector: clusterWide}, served: []string{"team-a"}, wantErr: "only team-a"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			err := checkSelector(tc.installed, InstallOptions{WebhookConfigName: "confighash", ConfighashNamespace: "confighash-system", ServedNamespaces: tc.served})
			if (err != nil) != (tc.wantErr != "") || err != nil && !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("checkSelector = %v, want an error with %q (none if empty)", err, tc.wantErr)
			}
		})
	}
}
