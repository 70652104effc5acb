package watchdog

import (
	"strings"
	"testing"
	"time"
)

func TestPolicyLimit(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		d := make([]time.Duration, len(v))
		for i, x := range v {
			d[i] = time.Duration(x) * time.Millisecond
		}
		return d
	}
	def := DefaultPolicy()
	for _, c := range []struct {
		name   string
		p      Policy
		kind   Kind
		recent []time.Duration
		want   time.Duration
		why    string
	}{
		{"fixed ignores history", FixedPolicy(5 * time.Second), Step, ms(1, 2, 3), 5 * time.Second, "runtime.stall_timeout = 5s"},
		{"fixed before any progress", FixedPolicy(5 * time.Second), Load, nil, 5 * time.Second, "runtime.stall_timeout = 5s"},
		{"auto: loading", def, Load, nil, 30 * time.Minute, "before the first load"},
		// Fast pieces (small files) do not shrink the limit of a large one.
		{"auto: each piece of the load", def, Load, ms(1, 2, 3), 30 * time.Minute, "for each piece of the load"},
		{"auto: first step", def, Step, nil, 30 * time.Minute, "before the first step"},
		{"auto: fast steps hit the floor", def, Step, ms(10, 12, 11), time.Minute, "the median 11ms of step"},
		// Median of 4, 5, 900 s is 5 s: one slow step does not raise it.
		{"auto: 20x the median", def, Step, ms(4000, 900000, 5000), 100 * time.Second, "20x the median 5s of step"},
		{"auto: evaluations have their own history", def, Eval, ms(30000), 600 * time.Second, "median 30s of evaluation"},
	} {
		got, why := c.p.limit(c.kind, c.recent)
		if got != c.want || !strings.Contains(why, c.why) {
			t.Errorf("%s: limit = %v (%q), want %v (containing %q)", c.name, got, why, c.want, c.why)
		}
	}
}

func TestPolicyTick(t *testing.T) {
	for _, c := range []struct {
		p    Policy
		want time.Duration
	}{
		{DefaultPolicy(), time.Second},
		{FixedPolicy(5 * time.Second), 500 * time.Millisecond},
		{FixedPolicy(time.Millisecond), 10 * time.Millisecond},
	} {
		if got := c.p.tick(); got != c.want {
			t.Errorf("%+v: tick = %v, want %v", c.p, got, c.want)
		}
	}
}

func TestBadPolicyPanics(t *testing.T) {
	for name, f := range map[string]func(){
		"FixedPolicy(0)": func() { FixedPolicy(0) },
		"zero policy":    func() { New(0, Policy{}, func(string) {}) },
		"nil abort":      func() { New(0, DefaultPolicy(), nil) },
		"Wrap(nil)":      func() { New(0, DefaultPolicy(), func(string) {}).Wrap(nil, "world") },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
}

// TestNilWatchdog: a job with runtime.stall_timeout = "off" has none, and
// reporting to it does nothing.
func TestNilWatchdog(t *testing.T) {
	var w *Watchdog
	w.Enter(Step, "epoch 1 step 0")
	w.Done()
	w.Stop()
}
