package serversettings

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// ConfigMapName is the ConfigMap, in confighash's namespace, that holds
// the settings. Users see it (RBAC resourceNames, GitOps exclusions):
// renaming it breaks them.
const ConfigMapName = "confighash-settings"

// Key is a setting: the name of the serve flag it publishes.
type Key string

// The settings published. Each key is the serve flag of the same name.
const (
	KeyNamespaces        Key = "namespaces"
	KeyWorkloadKind      Key = "workload-kind"
	KeyMaxWaveSize       Key = "max-wave-size"
	KeyMaxSourceKeys     Key = "max-source-keys"
	KeyWebhookConfigName Key = "webhook-config-name"
	KeyRolloutWindow     Key = "rollout-window"
	KeyFreeze            Key = "freeze"
)

// Bounds of what a reader takes from the ConfigMap, well above any real
// command line: the bytes of the known keys together, the values of one
// key, and the bytes of one value.
const (
	MaxBytes      = 128 << 10
	MaxValues     = 1024
	MaxValueBytes = 1024
)

// Settings are the values of the serve flags published.
type Settings struct {
	Namespaces        []string
	WorkloadKinds     []string
	MaxWaveSize       int
	MaxSourceKeys     int
	WebhookConfigName string
	// RolloutWindow and Freeze are the hook's --rollout-window and
	// --freeze, as given ("" for none).
	RolloutWindow, Freeze string
}

// Data is the ConfigMap's data for s. It fails when a reader would refuse
// it (Parse), rather than publish what no CLI can use.
func (s Settings) Data() (map[string]string, error) {
	data := map[string]string{
		string(KeyNamespaces):        strings.Join(s.Namespaces, "\n"),
		string(KeyWorkloadKind):      strings.Join(s.WorkloadKinds, "\n"),
		string(KeyMaxWaveSize):       strconv.Itoa(s.MaxWaveSize),
		string(KeyMaxSourceKeys):     strconv.Itoa(s.MaxSourceKeys),
		string(KeyWebhookConfigName): s.WebhookConfigName,
		string(KeyRolloutWindow):     s.RolloutWindow,
		string(KeyFreeze):            s.Freeze,
	}
	if _, err := Parse(data); err != nil {
		return nil, fmt.Errorf("the settings cannot be published: %w", err)
	}
	return data, nil
}

// Values are the settings a ConfigMap holds, by key; a key it lacks is
// absent. A list with no value is an empty slice.
type Values map[Key][]string

// Equal reports whether the values of a flag, given, are those published
// under key: as sets for a list (the order of --namespaces or of
// --workload-kind means nothing), as strings otherwise.
func Equal(given, published []string) bool {
	return slices.Equal(sortedUnique(given), sortedUnique(published))
}

func sortedUnique(v []string) []string {
	return slices.Compact(slices.Sorted(slices.Values(v)))
}
