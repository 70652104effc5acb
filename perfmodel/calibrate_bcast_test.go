package perfmodel

import (
	"fmt"
	"strings"
	"testing"

	"scalegnn/collectives"
	"scalegnn/device"
)

// TestStagedBcastLoopDelivers: the calibration's staged loop is a real
// aggregation's broadcasts: after it every rank holds root k's buffer in
// buffer k, for every k, and the work ran once per stage. Group sizes
// include 1 and an odd one.
func TestStagedBcastLoopDelivers(t *testing.T) {
	const n = 37
	for _, p := range []int{1, 3, 4} {
		errs := collectives.RunLocal(p, func(c collectives.Comm) error {
			bufs := make([][]float32, p)
			for k := range bufs {
				bufs[k] = make([]float32, n)
				if k == c.Rank() {
					for i := range bufs[k] {
						bufs[k][i] = float32(1000*k + i)
					}
				}
			}
			works := 0
			if err := stagedBcastLoop(c, bufs, make([]collectives.Request, p), func() { works++ }); err != nil {
				return err
			}
			if works != p {
				return fmt.Errorf("rank %d: work ran %d times, want %d", c.Rank(), works, p)
			}
			for k := range bufs {
				for i, v := range bufs[k] {
					if v != float32(1000*k+i) {
						return fmt.Errorf("rank %d: buffer %d[%d] = %g, want root %d's %d", c.Rank(), k, i, v, k, 1000*k+i)
					}
				}
			}
			return nil
		})
		for r, err := range errs {
			if err != nil {
				t.Errorf("p=%d rank %d: %v", p, r, err)
			}
		}
	}
}

// TestCalibrateFitsStagedBcast: a quick calibration of 4 in-process ranks
// measures the staged broadcast on every group size (the log names each),
// records the fit, and writes a profile that loads back. Goroutine ranks
// copy in memory, so the fitted bandwidth may come out unset (a zero
// slope): only its validity is checked when set.
func TestCalibrateFitsStagedBcast(t *testing.T) {
	if testing.Short() {
		t.Skip("calibration takes a few seconds")
	}
	logs := make([]*testLog, 4)
	ms := make([]*Machine, 4)
	errs := collectives.RunLocal(4, func(c collectives.Comm) error {
		logs[c.Rank()] = &testLog{}
		m, err := Calibrate(c, device.Host(1), CalibrateOptions{Quick: true, Threads: 1, Log: logs[c.Rank()]})
		ms[c.Rank()] = m
		return err
	})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	m := ms[0]
	for _, p := range []int{2, 4} {
		if !logs[0].has(fmt.Sprintf("intra bcast p=%d bytes=%d (staged", p, 1<<22)) {
			t.Errorf("the calibration log has no staged broadcast of %d bytes on %d ranks:\n%s", 1<<22, p, logs[0])
		}
	}
	if _, ok := m.Fit["comm_bcast_r2"]; !ok {
		t.Errorf("fit has no comm_bcast_r2: %v", m.Fit)
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("calibrated machine does not validate: %v", err)
	}
	// The products in mixed precision are measured too.
	if !m.HasBF16() || m.BF16.SpMM.Form != SpMMLinear || m.BF16.GEMM.NN.FMA+m.BF16.GEMM.NN.Elem+m.BF16.GEMM.NN.Call <= 0 {
		t.Errorf("no bf16 costs calibrated: %+v", m.BF16)
	}
	if _, ok := m.Fit["bf16_spmm_r2"]; !ok || !logs[0].has("bf16_spmm rows=") || !logs[0].has("bf16_gemm tn ") {
		t.Errorf("the calibration did not fit and log the bf16 products: fit %v\n%s", m.Fit, logs[0])
	}
	if b := m.Comm.Bcast; b.Bandwidth < 0 || b.Latency < 0 {
		t.Errorf("comm.bcast = %+v: negative", b)
	}
}

// testLog collects a calibration's progress lines.
type testLog struct{ b []byte }

func (l *testLog) Write(p []byte) (int, error) { l.b = append(l.b, p...); return len(p), nil }
func (l *testLog) String() string              { return string(l.b) }
func (l *testLog) has(s string) bool           { return strings.Contains(string(l.b), s) }
