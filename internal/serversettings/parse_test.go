package serversettings

import (
	"reflect"
	"strings"
	"testing"
)

const widgetKind = "group=e2e.confighash.dev,version=v1,kind=Widget,resource=widgets,template=spec.template"

// TestDataRoundTrips: what a server publishes, a reader reads back as the
// flags' values, lists one value a line, none as an empty list.
func TestDataRoundTrips(t *testing.T) {
	for name, s := range map[string]Settings{
		"defaults": {MaxWaveSize: 16, MaxSourceKeys: 1024, WebhookConfigName: "confighash"},
		"all set": {Namespaces: []string{"team-a", "team-b"}, WorkloadKinds: []string{widgetKind},
			MaxWaveSize: 0, MaxSourceKeys: 7, WebhookConfigName: "other",
			RolloutWindow: "Mon-Fri 09:00-17:00 Europe/Berlin", Freeze: "2026-12-21/2027-01-04 Europe/Berlin; 2027-04-01/2027-04-02 UTC"},
	} {
		t.Run(name, func(t *testing.T) {
			data, err := s.Data()
			if err != nil {
				t.Fatal(err)
			}
			v, err := Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			want := Values{
				KeyNamespaces:        append([]string{}, s.Namespaces...),
				KeyWorkloadKind:      append([]string{}, s.WorkloadKinds...),
				KeyMaxWaveSize:       {strings.TrimSpace(data[string(KeyMaxWaveSize)])},
				KeyMaxSourceKeys:     {data[string(KeyMaxSourceKeys)]},
				KeyWebhookConfigName: {s.WebhookConfigName},
				KeyRolloutWindow:     {s.RolloutWindow},
				KeyFreeze:            {s.Freeze},
			}
			if !reflect.DeepEqual(v, want) {
				t.Errorf("Parse(Data()) = %q, want %q", v, want)
			}
		})
	}
}

// TestParseRefusesGarbage: the ConfigMap is input; each bad value is named
// by its key, and a value is never echoed whole.
func TestParseRefusesGarbage(t *testing.T) {
	long := strings.Repeat("x", MaxValueBytes+1)
	tests := map[string]struct {
		data map[string]string
		want string
	}{
		"not a number":       {map[string]string{"max-wave-size": "sixteen"}, `max-wave-size, value 1: "sixteen" is not an integer`},
		"negative":           {map[string]string{"max-wave-size": "-1"}, "of at least 0"},
		"no keys":            {map[string]string{"max-source-keys": "0"}, "of at least 1"},
		"two sizes":          {map[string]string{"max-wave-size": "1\n2"}, "max-wave-size: 2 values, want one"},
		"bad namespace":      {map[string]string{"namespaces": "team-a\nTeam_B"}, `namespaces, value 2: "Team_B"`},
		"empty line":         {map[string]string{"namespaces": "team-a\n"}, "namespaces, value 2"},
		"bad kind":           {map[string]string{"workload-kind": "kind=Nope"}, "workload-kind, value 1"},
		"bad config name":    {map[string]string{"webhook-config-name": "no/slash"}, "webhook-config-name, value 1"},
		"bad window":         {map[string]string{"rollout-window": "Mon-Fri 9-5"}, `rollout-window, value 1: window "Mon-Fri 9-5"`},
		"two windows lines":  {map[string]string{"rollout-window": "* 09:00-17:00 UTC\n* 09:00-17:00 UTC"}, "rollout-window: 2 values, want one"},
		"bad freeze":         {map[string]string{"freeze": "2026-12-21/2027-01-04 UTC; christmas"}, "freeze, value 1"},
		"long value":         {map[string]string{"webhook-config-name": long}, "more than 1024"},
		"too many values":    {map[string]string{"namespaces": strings.Repeat("a\n", MaxValues) + "a"}, "more than 1024"},
		"too large all told": {map[string]string{"namespaces": strings.Repeat("a", MaxBytes)}, "more than the"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := Parse(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
			if len(err.Error()) > 2*MaxValueBytes {
				t.Errorf("error of %d bytes: it echoes the value", len(err.Error()))
			}
		})
	}
}

// TestParseSkipsWhatItDoesNotKnow: a newer server may publish more keys,
// and an older one fewer; a key that is absent stays absent.
func TestParseSkipsWhatItDoesNotKnow(t *testing.T) {
	v, err := Parse(map[string]string{"max-wave-size": "4", "rollout-timeout": "anything at all"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Values{KeyMaxWaveSize: {"4"}}); !reflect.DeepEqual(v, want) {
		t.Errorf("Parse = %q, want %q", v, want)
	}
}

// TestDataRefusesWhatReadersRefuse: a server never publishes what a CLI
// would reject.
func TestDataRefusesWhatReadersRefuse(t *testing.T) {
	many := make([]string, MaxValues+1)
	for i := range many {
		many[i] = "ns"
	}
	if _, err := (Settings{Namespaces: many, MaxSourceKeys: 1, WebhookConfigName: "c"}).Data(); err == nil {
		t.Error("Data published more namespaces than a reader takes")
	}
}

func TestEqual(t *testing.T) {
	for _, tc := range []struct {
		given, published []string
		want             bool
	}{
		{[]string{"16"}, []string{"16"}, true},
		{[]string{"8"}, []string{"16"}, false},
		{[]string{"b", "a"}, []string{"a", "b"}, true},
		{nil, []string{}, true},
		{[]string{"a"}, []string{}, false},
	} {
		if got := Equal(tc.given, tc.published); got != tc.want {
			t.Errorf("Equal(%q, %q) = %v, want %v", tc.given, tc.published, got, tc.want)
		}
	}
}
