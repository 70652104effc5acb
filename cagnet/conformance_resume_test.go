package cagnet

import (
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
)

// TestResumeConformance: the kept state (float32 parameters and moments,
// the step) continues training bit for bit on the same (P, c) and within
// ConformanceTol on another c, on 1, 4, 6 and 8 in-process ranks (the
// cases scalegnn selftest runs over MPI).
func TestResumeConformance(t *testing.T) {
	for _, p := range []int{1, 4, 6, 8} {
		errs := collectives.RunLocal(p, func(w collectives.Comm) error {
			if errs := ResumeConformance(w, device.Host(1)); len(errs) > 0 {
				return errs[0]
			}
			return nil
		})
		for _, err := range errs {
			if err != nil {
				t.Error(err)
			}
		}
	}
}
