package webhook

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
)

// Flags that set Options, named once for BindFlags and Validate's errors.
const (
	flagMaxInFlight        = "webhook-max-in-flight"
	flagMaxConnsPerAddress = "webhook-max-connections-per-address"
)

// Options are the webhook's settings an operator may change. cmd/confighash
// embeds them in its options and binds their flags with BindFlags; the
// other bounds are fixed by what the apiserver sends (see Limits).
type Options struct {
	// MaxInFlight bounds the admission requests handled at once
	// (Limits.MaxInFlight).
	MaxInFlight int
	// MaxConnsPerAddress bounds the connections open at once from one
	// source address; more are closed at once (Server).
	MaxConnsPerAddress int
}

// DefaultOptions are the webhook's defaults.
func DefaultOptions() Options {
	return Options{MaxInFlight: DefaultMaxInFlight, MaxConnsPerAddress: DefaultMaxConnsPerAddress}
}

// BindFlags binds o's flags in fs, with o's values as their defaults.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.IntVar(&o.MaxInFlight, flagMaxInFlight, o.MaxInFlight, "admission requests handled at once; more wait briefly, then get 503 (the write passes unstamped)")
	fs.IntVar(&o.MaxConnsPerAddress, flagMaxConnsPerAddress, o.MaxConnsPerAddress, "connections the webhook keeps open from one source address; more are closed at once (the apiserver needs a few)")
}

// Validate returns one error per setting out of range, each naming its flag.
func (o Options) Validate() error {
	var errs []error
	if o.MaxInFlight < 1 {
		errs = append(errs, fmt.Errorf("--%s must be >= 1", flagMaxInFlight))
	}
	if o.MaxConnsPerAddress < 1 {
		errs = append(errs, fmt.Errorf("--%s must be >= 1", flagMaxConnsPerAddress))
	}
	return errors.Join(errs...)
}

// Limits are the endpoint's limits under o, counting refusals in m.
func (o Options) Limits(m *Metrics) Limits {
	return Limits{MaxInFlight: o.MaxInFlight, Metrics: m}
}
