package app

import (
	"github.com/spf13/pflag"

	"github.com/confighash/confighash/internal/restamp"
	"github.com/confighash/confighash/internal/serversettings"
	"github.com/confighash/confighash/internal/window"
)

// windowFlags are the hook's --rollout-window and --freeze, as status and
// preview take them: what confighash publishes, unless given.
type windowFlags struct {
	RolloutWindow, Freeze string
}

func (o *windowFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&o.RolloutWindow, "rollout-window", o.RolloutWindow, "the hook's --rollout-window; overrides what confighash publishes")
	fs.StringVar(&o.Freeze, "freeze", o.Freeze, "the hook's --freeze; overrides what confighash publishes")
}

// windowSettings are the published settings windowFlags override.
func windowSettings() []settingFlag {
	return []settingFlag{
		{serversettings.KeyRolloutWindow, "rollout-window"},
		{serversettings.KeyFreeze, "freeze"},
	}
}

// cluster reads the flags as the hook reads its own.
func (o windowFlags) cluster() (window.Cluster, error) {
	return restamp.Options{RolloutWindow: o.RolloutWindow, Freeze: o.Freeze}.Windows()
}
