package app

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/confighash/confighash/certs"
	"github.com/confighash/confighash/internal/hashkey"
	"github.com/confighash/confighash/internal/mdtable"
	"github.com/confighash/confighash/internal/restamp"
	"github.com/confighash/confighash/internal/snapshotgc"
	"github.com/confighash/confighash/webhook"
)

// metricsDoc is the page users build dashboards and alerts from.
const metricsDoc = "../../../docs/metrics.md"

// series is one metric as registered or as documented.
type series struct {
	typ    string   // "counter", "gauge", …
	labels []string // label names, sorted
	help   string   // registered only
	values []string // documented only: the label values listed
}

// TestMetricsDocumented: docs/metrics.md's table lists exactly the series
// confighash registers (registrars), with their types and label names; the
// names follow the scheme the page states and pass promlint; and the label
// values it lists are snake_case and named in the series' help. The label
// values themselves are pinned by each package's TestLabelValuesArePublic.
func TestMetricsDocumented(t *testing.T) {
	// The naming scheme docs/metrics.md states.
	seriesName := regexp.MustCompile(`^confighash_((webhook|hook|hmac_key)_[a-z][a-z0-9_]*[a-z0-9]|build_info)$`)
	registered := registeredSeries(t)
	documented := documentedSeries(t)

	for name, r := range registered {
		d, ok := documented[name]
		switch {
		case !ok:
			t.Errorf("%s is registered but not in %s", name, metricsDoc)
		case d.typ != r.typ || !slices.Equal(d.labels, r.labels):
			t.Errorf("%s: %s documents a %s with labels %v; it is a %s with labels %v", name, metricsDoc, d.typ, d.labels, r.typ, r.labels)
		}
		for _, v := range d.values {
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(v) + `\b`).MatchString(r.help) {
				t.Errorf("%s: %s lists the label value %q, which its help does not: %q", name, metricsDoc, v, r.help)
			}
		}
		if !seriesName.MatchString(name) {
			t.Errorf("%s is not confighash_<webhook|hook|hmac_key>_<name> or confighash_build_info", name)
		}
		if (r.typ == "counter") != strings.HasSuffix(name, "_total") {
			t.Errorf("%s is a %s: only counters, and every counter, end in _total", name, r.typ)
		}
		for _, l := range r.labels {
			if !snakeCase(l) {
				t.Errorf("%s: label %q is not snake_case", name, l)
			}
		}
	}
	for name := range documented {
		if _, ok := registered[name]; !ok {
			t.Errorf("%s documents %s, which confighash does not register", metricsDoc, name)
		}
	}
}

// registrars register every package's series (each package's NewMetrics;
// a package that adds metrics adds its NewMetrics here).
var registrars = []struct {
	name     string
	register func(prometheus.Registerer) error
}{
	{"build info", func(reg prometheus.Registerer) error { return registerBuildInfo(reg, Version()) }},
	{"webhook", func(reg prometheus.Registerer) error { _, err := webhook.NewMetrics(reg); return err }},
	{"restamp", func(reg prometheus.Registerer) error { _, err := restamp.NewMetrics(reg); return err }},
	{"hashkey", func(reg prometheus.Registerer) error { _, err := hashkey.NewMetrics(reg); return err }},
	{"snapshotgc", func(reg prometheus.Registerer) error { _, err := snapshotgc.NewMetrics(reg); return err }},
	{"certs", func(reg prometheus.Registerer) error { return certs.NewMetrics(reg, certs.New(nil, certs.Options{})) }},
}

// TestNewMetricsRegistersOnce: each package's series are registered on the
// caller's registry, once: a second registration fails instead of two
// users (webhooks, hooks, keepers) sharing counts.
func TestNewMetricsRegistersOnce(t *testing.T) {
	for _, r := range registrars {
		reg := prometheus.NewRegistry()
		if err := r.register(reg); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		if r.register(reg) == nil {
			t.Errorf("%s: a second registration on one registry succeeded", r.name)
		}
	}
}

// registeredSeries registers every package's series on a fresh registry,
// gives each vector one child so that it is gathered, and lints the result.
func registeredSeries(t *testing.T) map[string]series {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	rec := &childMaker{Registerer: reg}
	for _, r := range registrars {
		if err := r.register(rec); err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
	}
	if rec.err != nil {
		t.Fatal(rec.err)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("promlint: %s: %s", p.Metric, p.Text)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]series{}
	for _, f := range families {
		var labels []string
		for _, l := range f.GetMetric()[0].GetLabel() {
			labels = append(labels, l.GetName())
		}
		slices.Sort(labels)
		out[f.GetName()] = series{typ: typeName(f.GetType()), labels: labels, help: f.GetHelp()}
	}
	if len(out) == 0 {
		t.Fatal("no series registered")
	}
	return out
}

// snakeCase: lower-case letters, digits and underscores, starting with a
// letter.
func snakeCase(s string) bool {
	for i, r := range s {
		if (r < 'a' || r > 'z') && (i == 0 || (r != '_' && (r < '0' || r > '9'))) {
			return false
		}
	}
	return s != ""
}

func typeName(t dto.MetricType) string {
	return strings.ToLower(t.String())
}

// childMaker registers on its Registerer and creates one child of each
// vector, whatever its number of labels, so that Gather reports it.
type childMaker struct {
	prometheus.Registerer
	err error
}

func (c *childMaker) MustRegister(cols ...prometheus.Collector) {
	for _, col := range cols {
		if err := c.Register(col); err != nil {
			panic(err)
		}
	}
}

func (c *childMaker) Register(col prometheus.Collector) error {
	if err := c.Registerer.Register(col); err != nil {
		return err
	}
	var child func(values ...string) error
	switch v := col.(type) {
	case *prometheus.CounterVec:
		child = func(values ...string) error { _, err := v.GetMetricWithLabelValues(values...); return err }
	case *prometheus.GaugeVec:
		child = func(values ...string) error { _, err := v.GetMetricWithLabelValues(values...); return err }
	case *prometheus.HistogramVec:
		child = func(values ...string) error { _, err := v.GetMetricWithLabelValues(values...); return err }
	case *prometheus.SummaryVec:
		child = func(values ...string) error { _, err := v.GetMetricWithLabelValues(values...); return err }
	default:
		return nil // not a vector: gathered as it is
	}
	for n := 1; n <= 8; n++ {
		if child(slices.Repeat([]string{"x"}, n)...) == nil {
			return nil
		}
	}
	c.err = fmt.Errorf("no child with up to 8 label values for %T", col)
	return nil
}

// documentedSeries reads the table of docs/metrics.md's "## Series": rows
// "| `name` | type | labels | meaning |", labels as "`a`; `b`: `v1`, `v2`"
// (label b with its values).
func documentedSeries(t *testing.T) map[string]series {
	t.Helper()
	text, err := os.ReadFile(metricsDoc)
	if err != nil {
		t.Fatal(err)
	}
	section, ok := mdtable.Section(string(text), "## Series")
	if !ok {
		t.Fatalf("%s has no ## Series section", metricsDoc)
	}
	out := map[string]series{}
	for _, cells := range seriesRows(section) {
		if len(cells) != 4 {
			t.Errorf("%s: a row of %d cells, want 4: %q", metricsDoc, len(cells), cells)
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		if _, dup := out[name]; dup {
			t.Errorf("%s lists %s twice", metricsDoc, name)
		}
		s := series{typ: strings.TrimSpace(cells[1])}
		for _, l := range strings.Split(cells[2], ";") {
			if strings.TrimSpace(l) == "" {
				continue
			}
			label, values, _ := strings.Cut(l, ":")
			s.labels = append(s.labels, strings.Trim(strings.TrimSpace(label), "`"))
			for _, v := range strings.Split(values, ",") {
				if v = strings.Trim(strings.TrimSpace(v), "`"); v == "" {
					continue
				}
				if !snakeCase(v) {
					t.Errorf("%s: %s: label value %q is not snake_case", metricsDoc, name, v)
				}
				s.values = append(s.values, v)
			}
		}
		slices.Sort(s.labels)
		out[name] = s
	}
	if len(out) == 0 {
		t.Fatalf("%s lists no series", metricsDoc)
	}
	return out
}

// seriesRows are the rows of section's tables that name a series ("`name`").
func seriesRows(section string) [][]string {
	var rows [][]string
	for _, tb := range mdtable.Tables(section) {
		for _, cells := range tb.Rows {
			if strings.HasPrefix(cells[0], "`") {
				rows = append(rows, cells)
			}
		}
	}
	return rows
}
