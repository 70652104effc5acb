package watchdog

import (
	"fmt"
	"slices"
	"time"
)

// Kind is the kind of work whose completion counts as progress.
type Kind int

const (
	Load Kind = iota // loading the data and building the model
	Step             // one training step
	Eval             // one evaluation
	nKinds
)

var kindNames = [nKinds]string{"load", "step", "evaluation"}

func (k Kind) String() string {
	if k < 0 || k >= nKinds {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// Policy turns the progress history into the longest wait allowed.
//
// With Fixed > 0 the limit is Fixed everywhere (runtime.stall_timeout set
// to a duration). Otherwise the limit adapts (runtime.stall_timeout =
// "auto"): First while nothing of the current kind has completed yet (the
// first piece of the load, the first step, the first evaluation: their
// time is unknown and a load at scale can take many minutes), then
// Multiple times the median completed duration of that kind, but at least
// Floor. The load is the exception: its limit stays First for every
// piece, because its pieces (a file of a prepared dataset, a stage of an
// in-memory one) differ in size by orders of magnitude, so their median
// predicts nothing; each piece restarts the clock, so a load of any length
// passes as long as no one piece takes longer than First.
type Policy struct {
	Fixed    time.Duration
	First    time.Duration
	Floor    time.Duration
	Multiple float64
}

// DefaultPolicy is runtime.stall_timeout = "auto": 30 minutes until a kind
// of work has completed once, then 20 times its median, at least one
// minute. docs/jobfile.md gives the reasons.
func DefaultPolicy() Policy {
	return Policy{First: 30 * time.Minute, Floor: time.Minute, Multiple: 20}
}

// FixedPolicy is runtime.stall_timeout set to d.
func FixedPolicy(d time.Duration) Policy {
	if d <= 0 {
		panic(fmt.Sprintf("watchdog: FixedPolicy(%v): need a positive duration", d))
	}
	return Policy{Fixed: d}
}

// limit returns the longest wait allowed in work of kind k, given the
// recent completed durations of that kind, and says how it was chosen.
func (p Policy) limit(k Kind, recent []time.Duration) (time.Duration, string) {
	if p.Fixed > 0 {
		return p.Fixed, fmt.Sprintf("runtime.stall_timeout = %v", p.Fixed)
	}
	if len(recent) == 0 {
		return p.First, fmt.Sprintf("limit %v before the first %v", p.First, k)
	}
	if k == Load {
		return p.First, fmt.Sprintf("limit %v for each piece of the load", p.First)
	}
	med := median(recent)
	l := max(p.Floor, time.Duration(p.Multiple*float64(med)))
	return l, fmt.Sprintf("limit %v: %gx the median %v of %v, at least %v", l, p.Multiple, med.Round(time.Millisecond), k, p.Floor)
}

// tick is how often the watchdog looks at the clock: a tenth of the
// smallest limit it can apply, between 10 ms and 1 s.
func (p Policy) tick() time.Duration {
	small := p.Floor
	if p.Fixed > 0 {
		small = p.Fixed
	}
	return min(max(small/10, 10*time.Millisecond), time.Second)
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
