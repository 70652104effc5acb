package collectives

import (
	"fmt"
	"strings"
	"testing"
)

func TestConformanceLocal(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 8} {
		t.Run(fmt.Sprintf("ranks=%d", n), func(t *testing.T) {
			errs := within(t, func() []error { return RunLocal(n, Conformance) })
			for r, err := range errs {
				if err != nil {
					t.Errorf("rank %d: %v", r, err)
				}
			}
		})
	}
}

// faulty wraps a Comm and breaks one method, to check that Conformance
// notices.
type faulty struct {
	Comm
	fault string
}

func (f faulty) AllReduceF32(buf []float32, op Op) error {
	if f.fault == "max is sum" && op == Max {
		op = Sum
	}
	return f.Comm.AllReduceF32(buf, op)
}

func (f faulty) AlltoallvF32(send []float32, sendCounts []int, recv []float32, recvCounts []int) error {
	err := f.Comm.AlltoallvF32(send, sendCounts, recv, recvCounts)
	if f.fault == "alltoallv drops last" && f.Rank() == f.Size()-1 && len(recv) > 0 {
		recv[len(recv)-1] = 0
	}
	return err
}

func (f faulty) Split(color, key int) (Comm, error) {
	if f.fault == "split ignores key" {
		key = 0
	}
	c, err := f.Comm.Split(color, key)
	if c == nil {
		return nil, err
	}
	return faulty{c, f.fault}, err
}

func TestConformanceCatchesFaults(t *testing.T) {
	for _, tc := range []struct {
		fault string
		want  string
	}{
		{"max is sum", "AllReduceF32(max"},
		{"alltoallv drops last", "AlltoallvF32("},
		{"split ignores key", "split(rank%3, key -rank)"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			errs := within(t, func() []error {
				return RunLocal(5, func(c Comm) error { return Conformance(faulty{c, tc.fault}) })
			})
			seen := false
			for r, err := range errs {
				if err == nil {
					t.Errorf("rank %d: no error", r)
					continue
				}
				if strings.Contains(err.Error(), tc.want) {
					seen = true
				}
			}
			if !seen {
				t.Errorf("no rank names %q: %v", tc.want, errs)
			}
		})
	}
}
