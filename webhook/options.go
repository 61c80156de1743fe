package webhook

import (
	"errors"
	"fmt"
)

// Flags of cmd/confighash that set Options, named here so that Validate's
// errors name the flag at fault.
const (
	FlagMaxInFlight        = "webhook-max-in-flight"
	FlagMaxConnsPerAddress = "webhook-max-connections-per-address"
)

// Options are the webhook's settings an operator may change. cmd/confighash
// embeds them in its options and binds its flags into them; the other
// bounds are fixed by what the apiserver sends (see Limits).
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

// Validate returns one error per setting out of range, each naming its flag.
func (o Options) Validate() error {
	var errs []error
	if o.MaxInFlight < 1 {
		errs = append(errs, fmt.Errorf("--%s must be >= 1", FlagMaxInFlight))
	}
	if o.MaxConnsPerAddress < 1 {
		errs = append(errs, fmt.Errorf("--%s must be >= 1", FlagMaxConnsPerAddress))
	}
	return errors.Join(errs...)
}

// Limits are the endpoint's limits under o, counting refusals in m.
func (o Options) Limits(m *Metrics) Limits {
	return Limits{MaxInFlight: o.MaxInFlight, Metrics: m}
}
