package serversettings

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/confighash/confighash/internal/window"
	"github.com/confighash/confighash/internal/workload"
)

// known is one key a reader knows: the check of one of its values, and
// whether it takes a list (else exactly one value, which may be empty
// when emptyOK).
type known struct {
	key     Key
	list    bool
	emptyOK bool
	check   func(string) error
}

// knownKeys are the keys a reader knows, in the order errors name them.
func knownKeys() []known {
	return []known{
		{key: KeyNamespaces, list: true, check: checkLabel},
		{key: KeyWorkloadKind, list: true, check: checkKind},
		{key: KeyMaxWaveSize, check: checkInt(0)},
		{key: KeyMaxSourceKeys, check: checkInt(1)},
		{key: KeyWebhookConfigName, check: checkSubdomain},
		{key: KeyRolloutWindow, emptyOK: true, check: checkWindow},
		{key: KeyFreeze, emptyOK: true, check: checkFreeze},
	}
}

// Parse reads a ConfigMap's data as settings. Every known key is checked
// as its serve flag checks it; an error names the key and never echoes
// more than a bounded value. Unknown keys are skipped: a newer server may
// publish more.
func Parse(data map[string]string) (Values, error) {
	size := 0
	for _, c := range knownKeys() {
		size += len(c.key) + len(data[string(c.key)])
	}
	if size > MaxBytes {
		return nil, fmt.Errorf("the settings take %d bytes, more than the %d a reader takes", size, MaxBytes)
	}
	v := Values{}
	var errs []error
	for _, c := range knownKeys() {
		k := c.key
		raw, ok := data[string(k)]
		if !ok {
			continue
		}
		vals := []string{}
		if raw != "" || c.emptyOK {
			vals = strings.Split(raw, "\n")
		}
		switch {
		case len(vals) > MaxValues:
			errs = append(errs, fmt.Errorf("%s: %d values, more than %d", k, len(vals), MaxValues))
			continue
		case !c.list && len(vals) != 1:
			errs = append(errs, fmt.Errorf("%s: %d values, want one", k, len(vals)))
			continue
		}
		for i, s := range vals {
			var err error
			if len(s) > MaxValueBytes {
				err = fmt.Errorf("%d bytes, more than %d", len(s), MaxValueBytes)
			} else {
				err = c.check(s)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s, value %d: %w", k, i+1, err))
			}
		}
		v[k] = vals
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return v, nil
}

func checkLabel(s string) error {
	if msgs := validation.IsDNS1123Label(s); len(msgs) > 0 {
		return fmt.Errorf("%s: %s", quoted(s), msgs[0])
	}
	return nil
}

func checkSubdomain(s string) error {
	if msgs := validation.IsDNS1123Subdomain(s); len(msgs) > 0 {
		return fmt.Errorf("%s: %s", quoted(s), msgs[0])
	}
	return nil
}

func checkKind(s string) error {
	_, err := workload.ParseKind(s)
	return err
}

// checkWindow and checkFreeze refuse what the hook's --rollout-window and
// --freeze refuse: status and preview decide with the same schedules.
func checkWindow(s string) error {
	if s == "" {
		return nil
	}
	_, err := window.Parse(s)
	return err
}

func checkFreeze(s string) error {
	if s == "" {
		return nil
	}
	_, err := window.ParseFreezes(s)
	return err
}

func checkInt(least int) func(string) error {
	return func(s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < least {
			return fmt.Errorf("%s is not an integer of at least %d", quoted(s), least)
		}
		return nil
	}
}

// quoted is s for an error message, cut short: a value of a key we know
// is no secret, but may be large.
func quoted(s string) string {
	const most = 64
	if len(s) > most {
		return strconv.Quote(s[:most]) + "..."
	}
	return strconv.Quote(s)
}
