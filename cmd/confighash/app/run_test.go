package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// Every case here fails before Serve reaches for a cluster: either the
// command line does not parse or the options do not validate.
func TestRun(t *testing.T) {
	tests := map[string]struct {
		args       []string
		wantErr    []string // substrings of the error; empty: nil error
		wantCode   int      // ExitCode of the error, when there is one
		wantStdout string   // substring; "" means stdout must be empty
	}{
		"help": {
			args:       []string{"help"},
			wantStdout: "usage: confighash [serve] [flags]",
		},
		"unknown command": {
			args:     []string{"frobnicate"},
			wantErr:  []string{`unknown command "frobnicate"`, "usage: confighash"},
			wantCode: 2,
		},
		"unknown command with flags": {
			args:     []string{"frobnicate", "--namespace=x"},
			wantErr:  []string{`unknown command "frobnicate"`},
			wantCode: 2,
		},
		"serve with an unknown flag": {
			args:     []string{"serve", "--bogus"},
			wantErr:  []string{"unknown flag: --bogus"},
			wantCode: 2,
		},
		"unknown flag without a command": {
			args:     []string{"--bogus"},
			wantErr:  []string{"unknown flag: --bogus"},
			wantCode: 2,
		},
		"bad flag value": {
			args:     []string{"serve", "--flap-limit=many"},
			wantErr:  []string{"--flap-limit"},
			wantCode: 2,
		},
		"invalid cert mode": {
			args:     []string{"serve", "--cert-mode=bogus"},
			wantErr:  []string{`--cert-mode must be "self" or "external", not "bogus"`},
			wantCode: 2,
		},
		"invalid webhook url, no command": {
			args:     []string{"--webhook-url=http://127.0.0.1:9443"},
			wantErr:  []string{"want https://HOST:PORT"},
			wantCode: 2,
		},
		"webhook url with external certs": {
			args:     []string{"serve", "--cert-mode=external", "--webhook-url=https://127.0.0.1:9443"},
			wantErr:  []string{"--webhook-url needs --cert-mode=self"},
			wantCode: 2,
		},
		"zap flags parse, then options are validated": {
			args:     []string{"serve", "--zap-log-level=debug", "--flap-window=0s"},
			wantErr:  []string{"--flap-window must be > 0"},
			wantCode: 2,
		},
		"--help prints usage and succeeds": {
			args:       []string{"--help"},
			wantStdout: "usage: confighash",
		},
		"-h prints usage and succeeds": {
			args:       []string{"-h"},
			wantStdout: "usage: confighash",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var stdout bytes.Buffer
			err := Run(context.Background(), tc.args, &stdout, io.Discard)
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("Run(%q) = %v, want nil", tc.args, err)
				}
			} else {
				if err == nil {
					t.Fatalf("Run(%q) = nil, want an error", tc.args)
				}
				for _, want := range tc.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
				if got := ExitCode(err); got != tc.wantCode {
					t.Errorf("ExitCode(%v) = %d, want %d", err, got, tc.wantCode)
				}
			}
			if tc.wantStdout == "" && stdout.Len() > 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
			if !strings.Contains(stdout.String(), tc.wantStdout) {
				t.Errorf("stdout = %q, want it to contain %q", stdout.String(), tc.wantStdout)
			}
		})
	}
}

type codedError struct{ code int }

func (e codedError) Error() string { return fmt.Sprintf("exit %d", e.code) }
func (e codedError) ExitCode() int { return e.code }

func TestExitCode(t *testing.T) {
	tests := map[string]struct {
		err  error
		want int
	}{
		"plain error":            {err: errors.New("boom"), want: 1},
		"usage error":            {err: usageError{errors.New("bad flag")}, want: 2},
		"wrapped usage error":    {err: fmt.Errorf("serve: %w", usageError{errors.New("bad flag")}), want: 2},
		"exit coder":             {err: codedError{3}, want: 3},
		"wrapped exit coder":     {err: fmt.Errorf("status: %w", codedError{1}), want: 1},
		"joined with usage":      {err: errors.Join(errors.New("x"), usageError{errors.New("y")}), want: 2},
		"usage wins over a code": {err: usageError{codedError{5}}, want: 2},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if got := ExitCode(tc.err); got != tc.want {
				t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}

func TestUsageErrorUnwraps(t *testing.T) {
	inner := errors.New("inner")
	err := error(usageError{inner})
	if !errors.Is(err, inner) {
		t.Errorf("errors.Is(usageError{inner}, inner) = false")
	}
	if err.Error() != "inner" {
		t.Errorf("Error() = %q, want %q", err.Error(), "inner")
	}
}
