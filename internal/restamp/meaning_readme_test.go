package restamp

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/confighash/confighash/internal/contract"
	"github.com/confighash/confighash/internal/mdtable"
)

// affectsWaves classifies every annotation of README.md's table: whether
// it affects the waves, halts or holds, so that the shared-meaning test
// must cover it. A new row fails TestMeaningRowsCoverTheReadme until it is
// classified here.
func affectsWaves() map[string]bool {
	return map[string]bool{
		contract.WavesAnnotation:          true,
		contract.RolloutOrderAnnotation:   true,
		contract.HaltAnnotation:           true,
		contract.HoldAnnotation:           true,
		contract.InjectionAnnotation:      false,
		contract.ChecksumAnnotation:       false,
		contract.IncludeAnnotation:        false,
		contract.ExcludeAnnotation:        false,
		contract.CoalesceWindowAnnotation: false,
		contract.IgnoreAnnotation:         false,
		// What a re-stamp was for: it tells a new leader which readers are
		// in flight (records_waves_test.go), and places, halts and holds
		// no reader; preview and status show it and decide nothing on it.
		// Its failing= says a rollout is not judged, which the judge's own
		// tests cover (wave_before_test.go).
		contract.RolloutAnnotation: false,
		// When a change may start, not its waves or halts: decided in one
		// place, internal/window.Decide, whose own tests cover what each
		// means (decide_test.go); the gate only asks it.
		contract.WindowAnnotation: false,
		contract.FreezeAnnotation: false,
		contract.UrgentAnnotation: false,
	}
}

// readmeAnnotations are the first two cells (the key, unquoted, and where
// it goes) of the rows of README.md's "## Annotations" table whose where
// says annotation, with the row's text.
func readmeAnnotations(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	section, ok := mdtable.Section(string(b), "## Annotations")
	if !ok {
		t.Fatal("README.md has no ## Annotations section")
	}
	rows := map[string]string{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|([^|]*)\\|(.*)$").FindAllStringSubmatch(section, -1) {
		if strings.Contains(m[2], "annotation") {
			rows[m[1]] = m[3]
		}
	}
	if len(rows) == 0 {
		t.Fatal("README.md's annotation table has no annotation rows")
	}
	return rows
}

// TestMeaningRowsCoverTheReadme: every README annotation that affects
// waves, halts or holds has a case in meaningRows.
func TestMeaningRowsCoverTheReadme(t *testing.T) {
	covered := map[string]int{}
	for _, row := range meaningRows() {
		covered[row.annotation]++
	}
	classified := affectsWaves()
	// Backstop for the classification: a row that speaks of them affects
	// them.
	speaks := regexp.MustCompile(`\bwaves?\b|\bhalt|\bflap hold\b`)
	link := regexp.MustCompile(`\[[^\]]*\]\([^)]*\)`)
	for key, text := range readmeAnnotations(t) {
		text = link.ReplaceAllString(text, "") // a link to a page is not what the row says
		affects, ok := classified[key]
		switch {
		case !ok:
			t.Errorf("README.md's %s is not classified in affectsWaves", key)
		case !affects && speaks.MatchString(text):
			t.Errorf("README.md's %s speaks of waves, halts or holds, but affectsWaves says it affects none", key)
		case affects && covered[key] == 0:
			t.Errorf("README.md's %s affects waves, halts or holds, and meaningRows has no case of it", key)
		}
	}
}
