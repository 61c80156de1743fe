package app

import (
	"math"
	"net"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	tests := map[string]struct {
		mutate   func(*Options)
		wantEP   *webhookEndpoint // nil: no endpoint
		wantErrs []string         // substrings; empty: no error
	}{
		"defaults": {
			mutate: func(*Options) {},
		},
		"external cert mode": {
			mutate: func(o *Options) { o.CertMode = CertModeExternal },
		},
		"zero coalesce window": {
			mutate: func(o *Options) { o.Hook.CoalesceWindow = 0 },
		},
		"webhook url ipv4": {
			mutate: func(o *Options) { o.WebhookURL = "https://127.0.0.1:9443" },
			wantEP: &webhookEndpoint{host: "127.0.0.1", port: 9443, ip: net.ParseIP("127.0.0.1")},
		},
		"webhook url with a trailing slash": {
			mutate: func(o *Options) { o.WebhookURL = "https://127.0.0.1:9443/" },
			wantEP: &webhookEndpoint{host: "127.0.0.1", port: 9443, ip: net.ParseIP("127.0.0.1")},
		},
		"webhook url ipv6": {
			mutate: func(o *Options) { o.WebhookURL = "https://[::1]:8443" },
			wantEP: &webhookEndpoint{host: "::1", port: 8443, ip: net.ParseIP("::1")},
		},
		"webhook url hostname": {
			mutate: func(o *Options) { o.WebhookURL = "https://host.docker.internal:443" },
			wantEP: &webhookEndpoint{host: "host.docker.internal", port: 443},
		},
		"webhook url missing port": {
			mutate:   func(o *Options) { o.WebhookURL = "https://127.0.0.1" },
			wantErrs: []string{`--webhook-url "https://127.0.0.1": want https://HOST:PORT with no path`},
		},
		"webhook url http scheme": {
			mutate:   func(o *Options) { o.WebhookURL = "http://127.0.0.1:9443" },
			wantErrs: []string{"want https://HOST:PORT with no path"},
		},
		"webhook url without scheme": {
			mutate:   func(o *Options) { o.WebhookURL = "127.0.0.1:9443" },
			wantErrs: []string{`--webhook-url: parse "127.0.0.1:9443"`},
		},
		"webhook url with a path": {
			mutate:   func(o *Options) { o.WebhookURL = "https://127.0.0.1:9443/mutate" },
			wantErrs: []string{"want https://HOST:PORT with no path"},
		},
		"webhook url port zero": {
			mutate:   func(o *Options) { o.WebhookURL = "https://127.0.0.1:0" },
			wantErrs: []string{`--webhook-url "https://127.0.0.1:0": bad port`},
		},
		"webhook url port too large": {
			mutate:   func(o *Options) { o.WebhookURL = "https://127.0.0.1:65536" },
			wantErrs: []string{"bad port"},
		},
		"webhook url unparsable": {
			mutate:   func(o *Options) { o.WebhookURL = "https://127.0.0.1:94 43" },
			wantErrs: []string{`--webhook-url: parse "https://127.0.0.1:94 43": invalid port`},
		},
		"webhook url without host": {
			mutate:   func(o *Options) { o.WebhookURL = "https://:9443" },
			wantErrs: []string{`--webhook-url "https://:9443"`},
		},
		"bad cert mode": {
			mutate:   func(o *Options) { o.CertMode = "cert-manager" },
			wantErrs: []string{`--cert-mode must be "self" or "external", not "cert-manager"`},
		},
		"webhook url with external cert mode": {
			mutate: func(o *Options) {
				o.CertMode = CertModeExternal
				o.WebhookURL = "https://127.0.0.1:9443"
			},
			wantErrs: []string{"--webhook-url needs --cert-mode=self"},
		},
		"empty namespace": {
			mutate:   func(o *Options) { o.Namespace = "" },
			wantErrs: []string{"--namespace must not be empty"},
		},
		"negative coalesce window": {
			mutate:   func(o *Options) { o.Hook.CoalesceWindow = -time.Second },
			wantErrs: []string{"--coalesce-window must be >= 0"},
		},
		"coalesce cap below the window": {
			mutate:   func(o *Options) { o.Hook.CoalesceWindow, o.Hook.CoalesceMax = time.Minute, time.Second },
			wantErrs: []string{"--coalesce-max must be >= --coalesce-window"},
		},
		"zero writes per second": {
			mutate:   func(o *Options) { o.Hook.WritesPerSecond = 0 },
			wantErrs: []string{"--writes-per-second must be > 0"},
		},
		"zero flap limit": {
			mutate:   func(o *Options) { o.Hook.FlapLimit = 0 },
			wantErrs: []string{"--flap-limit must be >= 1"},
		},
		"zero flap window": {
			mutate:   func(o *Options) { o.Hook.FlapWindow = 0 },
			wantErrs: []string{"--flap-window must be > 0"},
		},
		"zero flap quiet": {
			mutate:   func(o *Options) { o.Hook.FlapQuiet = 0 },
			wantErrs: []string{"--flap-quiet must be > 0"},
		},
		"flap quiet cap below the quiet time": {
			mutate:   func(o *Options) { o.Hook.FlapQuiet, o.Hook.FlapMaxQuiet = time.Hour, time.Minute },
			wantErrs: []string{"--flap-quiet-max must be >= --flap-quiet"},
		},
		"zero writes burst": {
			mutate:   func(o *Options) { o.Hook.WritesBurst = 0 },
			wantErrs: []string{"--writes-burst must be >= 1"},
		},
		"zero hook workers": {
			mutate:   func(o *Options) { o.Hook.Workers = 0 },
			wantErrs: []string{"--hook-workers must be >= 1"},
		},
		"zero kube api qps": {
			mutate:   func(o *Options) { o.KubeAPIQPS = 0 },
			wantErrs: []string{"--kube-api-qps must be > 0"},
		},
		"NaN kube api qps": {
			mutate:   func(o *Options) { o.KubeAPIQPS = float32(math.NaN()) },
			wantErrs: []string{"--kube-api-qps must be > 0"},
		},
		"infinite kube api qps": {
			mutate:   func(o *Options) { o.KubeAPIQPS = float32(math.Inf(1)) },
			wantErrs: []string{"--kube-api-qps must be > 0"},
		},
		"NaN memory limit ratio": {
			mutate:   func(o *Options) { o.MemoryLimitRatio = math.NaN() },
			wantErrs: []string{"--memory-limit-ratio must be within [0, 1]"},
		},
		"webhook port zero": {
			mutate:   func(o *Options) { o.WebhookPort = 0 },
			wantErrs: []string{"--webhook-port must be within [1, 65535]"},
		},
		"webhook port negative": {
			mutate:   func(o *Options) { o.WebhookPort = -1 },
			wantErrs: []string{"--webhook-port must be within [1, 65535]"},
		},
		"webhook port too large": {
			mutate:   func(o *Options) { o.WebhookPort = 65536 },
			wantErrs: []string{"--webhook-port must be within [1, 65535]"},
		},
		"zero kube api burst": {
			mutate:   func(o *Options) { o.KubeAPIBurst = 0 },
			wantErrs: []string{"--kube-api-burst must be >= 1"},
		},
		"every error is reported": {
			mutate: func(o *Options) {
				o.CertMode = "bogus"
				o.Namespace = ""
				o.Hook.FlapLimit = 0
				o.WebhookURL = "https://127.0.0.1:9443"
			},
			wantErrs: []string{"--cert-mode must be", "--namespace must not be empty", "--flap-limit must be >= 1", "--webhook-url needs --cert-mode=self"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := DefaultOptions()
			tc.mutate(&o)
			v, err := o.validate()
			if len(tc.wantErrs) > 0 {
				if err == nil {
					t.Fatalf("validate() = %+v, nil; want an error", v)
				}
				for _, want := range tc.wantErrs {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not contain %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("validate: %v", err)
			}
			checkEndpoint(t, v.endpoint, tc.wantEP)
		})
	}
}

func checkEndpoint(t *testing.T, got, want *webhookEndpoint) {
	t.Helper()
	if want == nil {
		if got != nil {
			t.Errorf("endpoint = %+v, want none", got)
		}
		return
	}
	if got == nil {
		t.Fatalf("endpoint = nil, want %+v", want)
	}
	if got.host != want.host || got.port != want.port || !got.ip.Equal(want.ip) || (got.ip == nil) != (want.ip == nil) {
		t.Errorf("endpoint = %+v, want %+v", got, want)
	}
}

func TestParseWebhookURL(t *testing.T) {
	tests := map[string]struct {
		raw     string
		want    *webhookEndpoint
		wantErr string
	}{
		"ipv4":         {raw: "https://127.0.0.1:9443", want: &webhookEndpoint{host: "127.0.0.1", port: 9443, ip: net.ParseIP("127.0.0.1")}},
		"localhost":    {raw: "https://localhost:9443", want: &webhookEndpoint{host: "localhost", port: 9443}},
		"max port":     {raw: "https://10.0.0.1:65535", want: &webhookEndpoint{host: "10.0.0.1", port: 65535, ip: net.ParseIP("10.0.0.1")}},
		"missing port": {raw: "https://127.0.0.1", wantErr: "want https://HOST:PORT"},
		"empty port":   {raw: "https://127.0.0.1:", wantErr: "want https://HOST:PORT"},
		"http":         {raw: "http://127.0.0.1:9443", wantErr: "want https://HOST:PORT"},
		"path":         {raw: "https://127.0.0.1:9443/x", wantErr: "with no path"},
		"empty":        {raw: "", wantErr: "want https://HOST:PORT"},
		"bad port":     {raw: "https://127.0.0.1:99999", wantErr: "bad port"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := parseWebhookURL(tc.raw)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseWebhookURL(%q) = %+v, %v; want an error containing %q", tc.raw, got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseWebhookURL(%q): %v", tc.raw, err)
			}
			checkEndpoint(t, got, tc.want)
		})
	}
}

func TestHostPort(t *testing.T) {
	tests := map[string]struct {
		raw  string
		want string
	}{
		"ipv4":     {raw: "https://127.0.0.1:9443", want: "127.0.0.1:9443"},
		"ipv6":     {raw: "https://[::1]:9443", want: "[::1]:9443"},
		"hostname": {raw: "https://localhost:8443/", want: "localhost:8443"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ep, err := parseWebhookURL(tc.raw)
			if err != nil {
				t.Fatal(err)
			}
			if got := hostPort(ep); got != tc.want {
				t.Errorf("hostPort = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBind(t *testing.T) {
	tests := map[string]struct {
		args  []string
		check func(t *testing.T, o Options)
	}{
		"defaults": {
			args: nil,
			check: func(t *testing.T, o Options) {
				d := DefaultOptions()
				if o.Namespace != d.Namespace || o.WebhookPort != d.WebhookPort || o.CertMode != CertModeSelf ||
					o.Hook.FlapLimit != d.Hook.FlapLimit || o.Hook.FlapWindow != d.Hook.FlapWindow || o.Hook.CoalesceWindow != d.Hook.CoalesceWindow ||
					o.Hook.FlapQuiet != d.Hook.FlapQuiet || o.Hook.FlapMaxQuiet != d.Hook.FlapMaxQuiet ||
					o.Hook.WritesPerSecond != d.Hook.WritesPerSecond || o.Hook.WritesBurst != 100 || o.Hook.Workers != 8 || o.LeaderElect {
					t.Errorf("options after parsing no flags = %+v, want the defaults %+v", o, d)
				}
			},
		},
		"every hook flag": {
			args: []string{"--namespace=ch", "--cert-mode=external", "--webhook-port=10250", "--coalesce-window=3s",
				"--writes-per-second=2.5", "--flap-limit=4", "--flap-window=1m", "--flap-quiet=20s", "--flap-quiet-max=5m", "--writes-burst=7", "--hook-workers=3", "--leader-elect",
				"--hmac-key-secret=k", "--webhook-url=https://127.0.0.1:1"},
			check: func(t *testing.T, o Options) {
				if o.Namespace != "ch" || o.CertMode != CertModeExternal || o.WebhookPort != 10250 ||
					o.Hook.CoalesceWindow != 3*time.Second || o.Hook.WritesPerSecond != 2.5 || o.Hook.FlapLimit != 4 ||
					o.Hook.FlapWindow != time.Minute || !o.LeaderElect || o.HMACKeySecret != "k" || o.WebhookURL != "https://127.0.0.1:1" ||
					o.Hook.FlapQuiet != 20*time.Second || o.Hook.FlapMaxQuiet != 5*time.Minute ||
					o.Hook.WritesBurst != 7 || o.Hook.Workers != 3 {
					t.Errorf("options = %+v", o)
				}
			},
		},
		"coalesce cap": {
			args: []string{"--coalesce-max=30s"},
			check: func(t *testing.T, o Options) {
				if o.Hook.CoalesceMax != 30*time.Second {
					t.Errorf("CoalesceMax = %s, want 30s", o.Hook.CoalesceMax)
				}
			},
		},
		"zap flags are accepted": {
			args:  []string{"--zap-log-level=debug", "--zap-devel"},
			check: func(t *testing.T, o Options) {},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tc.check(t, parsedServe(t, tc.args...))
		})
	}
}
