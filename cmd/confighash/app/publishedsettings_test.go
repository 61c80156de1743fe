package app

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/confighash/confighash/internal/serversettings"
)

// publishedBy is the fake cluster of a confighash started with args: the
// ConfigMap it publishes.
func publishedBy(t *testing.T, args ...string) *corev1.ConfigMap {
	t.Helper()
	o, _, err := optionsForArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	data, err := o.publishedSettings().Data()
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: o.Namespace, Name: serversettings.ConfigMapName}, Data: data}
}

// statusWithSettings parses status's args, takes the settings of
// published (nil: none published) for the flags not given, as Status
// does, and resolves them; it returns the command line and what it noted.
func statusWithSettings(t *testing.T, published *corev1.ConfigMap, args ...string) (*statusArgs, string) {
	t.Helper()
	a, err := parseStatusFlags(args, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	notes := withSettings(t, published, a.ConfighashNamespace, a.fs, statusSettings(), "confighash status")
	if err := a.resolve(); err != nil {
		t.Fatalf("resolve: %v", err)
	}
	return a, notes
}

// previewWithSettings is statusWithSettings for preview, which resolves
// nothing more.
func previewWithSettings(t *testing.T, published *corev1.ConfigMap, args ...string) (*previewArgs, string) {
	t.Helper()
	a, err := parsePreviewArgs(args, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	return a, withSettings(t, published, a.ConfighashNamespace, a.fs, previewSettings(), "confighash preview")
}

// withSettings is useSettings on a fake cluster holding published: the
// notes it writes.
func withSettings(t *testing.T, published *corev1.ConfigMap, namespace string, fs *pflag.FlagSet, settings []settingFlag, command string) string {
	t.Helper()
	var notes strings.Builder
	if err := useSettings(t.Context(), fakeWith(published).Build(), namespace, fs, settings, command, &notes); err != nil {
		t.Fatal(err)
	}
	return notes.String()
}

// fakeWith is a fake cluster holding published, if not nil.
func fakeWith(published *corev1.ConfigMap) *fake.ClientBuilder {
	b := fake.NewClientBuilder()
	if published != nil {
		b = b.WithObjects(published)
	}
	return b
}

// TestStatusUsesPublishedSettings: status, told none of the server's
// flags, takes its kinds, namespaces and webhook configuration from what
// it publishes, and so resolves a workload of a custom kind.
func TestStatusUsesPublishedSettings(t *testing.T) {
	cm := publishedBy(t, "--workload-kind="+cloneSetKind, "--namespaces=team-a", "--webhook-config-name=other")
	a, notes := statusWithSettings(t, cm, "clonesets/app", "-n", "team-a")
	if a.target.Name != "app" || !slices.Equal(a.ServedNamespaces, []string{"team-a"}) || a.WebhookConfigName != "other" {
		t.Errorf("target %+v, namespaces %v, webhook configuration %q; want the CloneSet app, [team-a], other", a.target, a.ServedNamespaces, a.WebhookConfigName)
	}
	if notes != "" {
		t.Errorf("notes %q, want none: no flag disagrees", notes)
	}
}

// TestPreviewFlagsOverrideAndSaySo: a flag given wins, with one line
// naming it, the value published and where; a flag given that agrees
// says nothing.
func TestPreviewFlagsOverrideAndSaySo(t *testing.T) {
	cm := publishedBy(t, "--max-wave-size=4", "--max-source-keys=50")
	a, notes := previewWithSettings(t, cm, "-f", "x.yaml", "--max-wave-size=2", "--max-source-keys=50")
	if a.MaxWaveSize != 2 || a.MaxSourceKeys != 50 {
		t.Errorf("wave size %d, source keys %d; want 2 (the flag's) and 50", a.MaxWaveSize, a.MaxSourceKeys)
	}
	want := "confighash preview: --max-wave-size=2 overrides 4, which confighash publishes in confighash-system/confighash-settings\n"
	if notes != want {
		t.Errorf("notes\n%q\nwant\n%q", notes, want)
	}
}

// TestSettingsUnreadableFallsBack: no ConfigMap (an older server, or no
// RBAC to read it) leaves the flags and defaults, and says so once; one
// that lacks a key says which.
func TestSettingsUnreadableFallsBack(t *testing.T) {
	a, notes := previewWithSettings(t, nil, "-f", "x.yaml")
	if a.MaxWaveSize != DefaultOptions().Hook.MaxWaveSize || strings.Count(notes, "\n") != 1 ||
		!strings.Contains(notes, "not found") || !strings.Contains(notes, "using the flags and their defaults") {
		t.Errorf("wave size %d, notes %q; want the default and one line saying it falls back", a.MaxWaveSize, notes)
	}

	older := publishedBy(t)
	delete(older.Data, string(serversettings.KeyMaxSourceKeys))
	if _, notes := previewWithSettings(t, older, "-f", "x.yaml"); !strings.Contains(notes, "publishes no max-source-keys") {
		t.Errorf("notes %q, want one naming the setting not published", notes)
	}
}

// TestSettingsGarbageIsAnError: a ConfigMap holding what no confighash
// publishes stops the command (exit 1, not a usage error) and names it.
func TestSettingsGarbageIsAnError(t *testing.T) {
	cm := publishedBy(t)
	cm.Data[string(serversettings.KeyWorkloadKind)] = "kind=Nope"
	a, err := parseStatusFlags(nil, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	err = useSettings(t.Context(), fakeWith(cm).Build(), a.ConfighashNamespace, a.fs, statusSettings(), "confighash status", &strings.Builder{})
	if err == nil || ExitCode(err) != 1 || !strings.Contains(err.Error(), "workload-kind") || !strings.Contains(err.Error(), serversettings.ConfigMapName) {
		t.Errorf("error %v, want exit 1 naming the key and the ConfigMap", err)
	}
}

// TestWindowSettings: status and preview take the hook's --rollout-window
// and --freeze from what it publishes, read as the hook reads them; a flag
// given wins and says so; a flag that does not parse is a usage error.
func TestWindowSettings(t *testing.T) {
	cm := publishedBy(t, "--rollout-window=Mon-Fri 09:00-17:00 Europe/Berlin", "--freeze=2026-12-21/2027-01-04 Europe/Berlin")
	s, notes := statusWithSettings(t, cm)
	if s.windows.Window == nil || s.windows.Window.String() != "Mon-Fri 09:00-17:00 Europe/Berlin" || len(s.windows.Freezes) != 1 || notes != "" {
		t.Errorf("status: windows %+v, notes %q; want the published window and freeze, no note", s.windows, notes)
	}

	p, notes := previewWithSettings(t, cm, "-f", "x.yaml", "--rollout-window=* 00:00-24:00 UTC")
	if err := errors.Join(p.checkSettings()...); err != nil {
		t.Fatal(err)
	}
	want := "confighash preview: --rollout-window=* 00:00-24:00 UTC overrides Mon-Fri 09:00-17:00 Europe/Berlin, which confighash publishes in confighash-system/confighash-settings\n"
	if p.windows.Window == nil || p.windows.Window.String() != "* 00:00-24:00 UTC" || len(p.windows.Freezes) != 1 || notes != want {
		t.Errorf("preview: windows %+v, notes\n%q\nwant\n%q", p.windows, notes, want)
	}

	if _, err := parsePreviewArgs([]string{"-f", "x.yaml", "--freeze=christmas"}, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), "--freeze") {
		t.Errorf("--freeze=christmas: %v, want an error naming --freeze", err)
	}
}
