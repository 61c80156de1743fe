package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/confighash/confighash/internal/serversettings"
)

// settingFlag is a setting confighash publishes and the flag of a command
// that overrides it.
type settingFlag struct {
	key  serversettings.Key
	flag string
}

// publishSettings makes the leader publish o's settings for status and
// preview. The leader, not every replica: the settings explain the hook,
// which runs there, and replicas started with other flags during a rolling
// upgrade would otherwise rewrite the ConfigMap in turn. A Publisher needs
// leader election, as any runnable that does not say otherwise.
func publishSettings(mgr manager.Manager, c client.Client, o Options) error {
	p := &serversettings.Publisher{Client: c, Namespace: o.Namespace, Settings: o.publishedSettings()}
	if err := mgr.Add(p); err != nil {
		return fmt.Errorf("adding the settings publisher: %w", err)
	}
	return nil
}

// publishedSettings are what serve publishes.
func (o Options) publishedSettings() serversettings.Settings {
	return serversettings.Settings{
		Namespaces:        o.Namespaces,
		WorkloadKinds:     o.WorkloadKinds,
		MaxWaveSize:       o.Hook.MaxWaveSize,
		MaxSourceKeys:     o.MaxSourceKeys,
		WebhookConfigName: o.WebhookConfigName,
		RolloutWindow:     o.Hook.RolloutWindow,
		Freeze:            o.Hook.Freeze,
	}
}

// useSettings reads the settings confighash publishes in namespace and
// sets from them each of flags that the command line did not give. It
// writes to notes, prefixed with cmd, a line for each flag given that
// disagrees with them, or one line saying they could not be read and the
// flags and defaults are used. An error is a ConfigMap that holds what no
// confighash publishes.
func useSettings(ctx context.Context, c client.Reader, namespace string, fs *pflag.FlagSet, flags []settingFlag, cmd string, notes io.Writer) error {
	v, err := serversettings.Read(ctx, c, namespace)
	var unavailable *serversettings.UnavailableError
	if errors.As(err, &unavailable) {
		_, err = fmt.Fprintf(notes, "%s: %v; using the flags and their defaults\n", cmd, err)
		return err
	}
	if err != nil {
		return err
	}
	lines, err := applySettings(fs, flags, v, namespace+"/"+serversettings.ConfigMapName)
	for _, l := range lines {
		if _, werr := fmt.Fprintf(notes, "%s: %s\n", cmd, l); werr != nil {
			return werr
		}
	}
	return err
}

// applySettings sets each of flags that fs was not given from v, and
// returns the notes: a flag given that disagrees with v, a setting v lacks
// (a server older than this command). where names the ConfigMap.
func applySettings(fs *pflag.FlagSet, flags []settingFlag, v serversettings.Values, where string) ([]string, error) {
	var notes []string
	for _, sf := range flags {
		f := fs.Lookup(sf.flag)
		if f == nil {
			return notes, fmt.Errorf("no flag --%s for the setting %s", sf.flag, sf.key)
		}
		published, ok := v[sf.key]
		switch {
		case !ok && f.Changed:
		case !ok:
			notes = append(notes, fmt.Sprintf("%s publishes no %s (an older confighash?); using --%s=%s", where, sf.key, sf.flag, showValues(flagValues(f))))
		case f.Changed:
			if given := flagValues(f); !serversettings.Equal(given, published) {
				notes = append(notes, fmt.Sprintf("--%s=%s overrides %s, which confighash publishes in %s", sf.flag, showValues(given), showValues(published), where))
			}
		default:
			if err := setFlagValues(f, published); err != nil {
				return notes, fmt.Errorf("the %s that confighash publishes in %s: %w", sf.key, where, err)
			}
		}
	}
	return notes, nil
}

// flagValues are f's values: each of a list's, else its one value.
func flagValues(f *pflag.Flag) []string {
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		return sv.GetSlice()
	}
	return []string{f.Value.String()}
}

// setFlagValues sets f as if the command line had given vals, leaving it
// not Changed: it was not given.
func setFlagValues(f *pflag.Flag, vals []string) error {
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		return sv.Replace(vals)
	}
	if len(vals) != 1 {
		return fmt.Errorf("%d values for --%s, want one", len(vals), f.Name)
	}
	return f.Value.Set(vals[0])
}

// showValues is a note's rendering of a flag's values.
func showValues(vals []string) string {
	if len(vals) == 0 {
		return `""`
	}
	return strings.Join(vals, " ")
}
