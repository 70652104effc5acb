package jobfile

import (
	"strings"
	"testing"
	"time"

	"scalegnn/internal/watchdog"
)

func TestRuntimeGuardKeysRefused(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{"[runtime]\nstall_timeout = \"20\"\n", `job.toml: runtime.stall_timeout = "20": expected a positive duration such as "20s" or "5m", "auto" or "off"`},
		{"[runtime]\nstall_timeout = \"0s\"\n", `job.toml: runtime.stall_timeout = "0s": expected a positive duration`},
		{"[runtime]\nstall_timeout = \"-5s\"\n", `job.toml: runtime.stall_timeout = "-5s": expected a positive duration`},
		{"[runtime]\nstall_timeout = 20\n", "runtime.stall_timeout = 20: expected a string"},
		{"[runtime]\nmem_check = \"no\"\n", `runtime.mem_check = "no": expected true or false`},
	} {
		_, err := ParseConfig("job.toml", []byte(c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line containing %q", c.data, err, c.want)
		}
	}
}

func TestStallPolicy(t *testing.T) {
	for _, c := range []struct {
		data string
		want watchdog.Policy
		on   bool
	}{
		{"", watchdog.DefaultPolicy(), true},
		{"[runtime]\nstall_timeout = \"auto\"\n", watchdog.DefaultPolicy(), true},
		{"[runtime]\nstall_timeout = \"off\"\n", watchdog.Policy{}, false},
		{"[runtime]\nstall_timeout = \"5s\"\n", watchdog.FixedPolicy(5 * time.Second), true},
		{"[runtime]\nstall_timeout = \"1m30s\"\n", watchdog.FixedPolicy(90 * time.Second), true},
	} {
		cfg, err := ParseConfig("job.toml", []byte(c.data))
		if err != nil {
			t.Errorf("%q: %v", c.data, err)
			continue
		}
		if got, on := cfg.Runtime.StallPolicy(); got != c.want || on != c.on {
			t.Errorf("%q: StallPolicy() = %+v, %v; want %+v, %v", c.data, got, on, c.want, c.on)
		}
		if !cfg.Runtime.MemCheck {
			t.Errorf("%q: runtime.mem_check defaults to false", c.data)
		}
	}
}
