package jobs

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/jobfile"
	"scalegnn/perfmodel"
	"scalegnn/plan"
)

// peakMemory samples the Go runtime's memory (every class: heap, stacks,
// runtime metadata, free pages not yet returned) until stop is closed and
// returns the largest value.
func peakMemory(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
		var peak uint64
		tick := time.NewTicker(200 * time.Microsecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// TestMemoryCheckHolds: the grid the memory check recommends within
// grid.mem_per_rank trains (with an evaluation) within that much memory
// per rank, as the Go runtime measures it (every class, garbage not yet
// collected included), under Go's soft limit as a rank's binary sets it.
// The goroutine ranks share one heap, so the mean over the ranks is held
// to the limit. Issue 25, defect 11: before gcn sized its arenas from the
// plan, a first pass grew them from nothing and left its whole need as
// garbage: 48.6MiB per rank measured on the recommended 4x2x2 (40.3MiB
// predicted) against 45MiB; after, 36-41MiB. scripts/memcheck-holds.sh
// checks the same under ulimit -v with real ranks.
func TestMemoryCheckHolds(t *testing.T) {
	if testing.Short() {
		t.Skip("trains Cora with a wide hidden layer")
	}
	cfg, err := jobfile.LoadConfig(filepath.Join("..", "examples", "cora.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Model.Hidden = 1000
	cfg.Train.Epochs = 1
	cfg.Train.EvalEvery = 1
	cfg.Output.Dir = t.TempDir()
	cfg.Grid.MemPerRank = "45MiB"
	err = plan.CheckMemory(cfg, 0, 1, nil)
	if err == nil {
		t.Fatal("Cora with hidden 1000 on one rank fits in 45MiB")
	}
	m := regexp.MustCompile(`the fastest grid that fits in \S+ per rank is (\d+)x(\d+)x(\d+)(?: \(d=1\))? on (\d+) ranks \(([^)]*) per rank\)`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("no grid recommended: %v", err)
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	shape := grid.Shape{D: 1, X: atoi(m[1]), Y: atoi(m[2]), Z: atoi(m[3])}
	cfg.Grid.X, cfg.Grid.Y, cfg.Grid.Z = shape.X, shape.Y, shape.Z
	limit, _ := perfmodel.ParseBytes(cfg.Grid.MemPerRank)

	runtime.GC()
	// A rank's binary sets Go's soft limit to what it may use
	// (launch.SoftMemoryLimit); the goroutine ranks share one heap.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	debug.SetMemoryLimit(int64(base) + int64(shape.Ranks())*limit)
	stop := make(chan struct{})
	peak := peakMemory(stop)
	var failed atomic.Bool
	for r, err := range collectives.RunLocal(shape.Ranks(), func(w collectives.Comm) error {
		c := *cfg
		j, err := Setup(&c, w, device.NewNative(1), zap.NewNop())
		if err != nil {
			return err
		}
		_, err = j.Train()
		return err
	}) {
		if err != nil {
			failed.Store(true)
			t.Errorf("rank %d: %v", r, err)
		}
	}
	close(stop)
	used := (int64(<-peak) - int64(base)) / int64(shape.Ranks())
	msg := fmt.Sprintf("recommended %s (%s per rank predicted); measured %s per rank (runtime total, mean over %d ranks), limit %s",
		shape, m[5], perfmodel.FormatBytes(used), shape.Ranks(), perfmodel.FormatBytes(limit))
	t.Log(msg)
	if gs, err := plan.EstimateGraphSize(cfg.Dataset); err == nil {
		t.Logf("prediction: %+v", perfmodel.EstimateMemory(plan.PerfJob(cfg, gs), shape, perfmodel.Coords{}))
	}
	if used > limit {
		t.Errorf("%s: the recommended grid does not fit", msg)
	}
}
