package deploy

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/confighash/confighash/e2e/controlplane"
)

// TestChartPDBNeedsTwoReplicas: a PodDisruptionBudget with minAvailable 1
// over one replica makes that pod unevictable, so every node drain hangs on
// it. The values schema refuses replicas < 2 while the PDB is enabled, and
// allows them once it is disabled. It renders with the Helm SDK only, so it
// needs no kubectl.
func TestChartPDBNeedsTwoReplicas(t *testing.T) {
	root, err := controlplane.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	chart := filepath.Join(root, "charts", "confighash")
	tests := map[string]struct {
		values  map[string]any
		wantErr bool
		wantPDB bool
	}{
		"defaults":                      {values: nil, wantPDB: true},
		"one replica, PDB on":           {values: map[string]any{"replicas": 1}, wantErr: true},
		"zero replicas, PDB on":         {values: map[string]any{"replicas": 0}, wantErr: true},
		"one replica, PDB said enabled": {values: map[string]any{"replicas": 1, "podDisruptionBudget": map[string]any{"enabled": true}}, wantErr: true},
		"two replicas, PDB on":          {values: map[string]any{"replicas": 2}, wantPDB: true},
		"one replica, PDB off":          {values: map[string]any{"replicas": 1, "podDisruptionBudget": map[string]any{"enabled": false}}},
		"three replicas, PDB off":       {values: map[string]any{"replicas": 3, "podDisruptionBudget": map[string]any{"enabled": false}}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			objs, err := HelmTemplate(chart, Namespace, tc.values)
			if tc.wantErr {
				if err == nil {
					t.Fatalf("%v rendered without error", tc.values)
				}
				if !strings.Contains(err.Error(), "replicas") {
					t.Errorf("the error does not name replicas: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := Find(objs, "PodDisruptionBudget", "confighash") != nil; got != tc.wantPDB {
				t.Errorf("PodDisruptionBudget rendered = %v, want %v", got, tc.wantPDB)
			}
		})
	}
}
