package jobs

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/grappa"
	"scalegnn/jobfile"
)

// TestIsolatedPhasesConfig: grappa.partitions must be a multiple of the
// ranks, and the chunks at least the partitions.
func TestIsolatedPhasesConfig(t *testing.T) {
	for _, tc := range []struct{ extra, want string }{
		{"[grid]\nd = 2\n[grappa]\npartitions = 3", "grappa.partitions = 3"},
		{"[grid]\nd = 2\n[grappa]\npartitions = -2", "grappa.partitions = -2"},
		{"[grid]\nd = 2\n[grappa]\npartitions = 6\nchunks = 4", "grappa.chunks = 4"},
	} {
		_, err := jobfile.ParseConfig("job.toml", []byte("[dataset]\nsource = \"cora\"\n[train]\nmode = \"isolated\"\n"+tc.extra+"\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one naming %q", tc.extra, err, tc.want)
		}
	}
	if _, err := jobfile.ParseConfig("job.toml", []byte("[dataset]\nsource = \"cora\"\n[train]\nmode = \"isolated\"\n[grid]\nd = 2\n[grappa]\npartitions = 6\n")); err != nil {
		t.Errorf("6 partitions on 2 ranks: %v", err)
	}
}

// TestIsolatedPhases: with P partitions on M ranks, every step of phase i
// trains rank r's partition i·M + r of the current super-epoch, exactly
// the partition grappa.Build makes of that slot, on a batch inside it;
// every partition is trained once per epoch; the super-epoch moves as the
// controller says.
func TestIsolatedPhases(t *testing.T) {
	for _, tc := range []struct{ ranks, partitions, chunks, batch, eps int }{
		{2, 4, 4, 30, 2}, // 2 phases of ⌈70/30⌉ = 3 steps
		{1, 4, 5, 0, 1},  // 4 phases of one whole-partition step
		{3, 6, 6, 20, 1},
	} {
		name := fmt.Sprintf("M=%d P=%d C=%d B=%d", tc.ranks, tc.partitions, tc.chunks, tc.batch)
		cfg := isolatedConfig(t, fmt.Sprintf("mode = \"isolated\"\nbatch_size = %d\n[grappa]\npartition = \"induced\"\npartitions = %d\nchunks = %d\nepochs_per_super_epoch = %d",
			tc.batch, tc.partitions, tc.chunks, tc.eps), filepath.Join(t.TempDir(), "out"))
		cfg.Grid.D = tc.ranks
		ph, _ := grappa.NewPhases(tc.partitions, tc.ranks)
		const epochs = 3
		var mu sync.Mutex
		trained := make([][]int, epochs) // per epoch, the times each partition trained
		for e := range trained {
			trained[e] = make([]int, tc.partitions)
		}
		errs := collectives.RunLocal(tc.ranks, func(w collectives.Comm) error {
			c := cfg
			j, err := Setup(&c, w, device.NewNative(1), zap.NewNop())
			if err != nil {
				return err
			}
			m := j.method.(*isolated)
			defer m.Close()
			iso := m.iso
			if want := iso.perPhase * ph.Count(); m.StepsPerEpoch() != want {
				return fmt.Errorf("%s: %d steps an epoch, want %d phases of %d", name, m.StepsPerEpoch(), ph.Count(), iso.perPhase)
			}
			if err := m.Start(0, 0); err != nil {
				return err
			}
			step := 0
			for e := range epochs {
				s := iso.superEpoch
				if want := e / tc.eps; s != want {
					return fmt.Errorf("%s: epoch %d in super-epoch %d, want %d", name, e, s, want)
				}
				for i := range ph.Count() {
					for range iso.perPhase {
						if _, err := m.Step(step); err != nil {
							return err
						}
						step++
						p := ph.Partition(w.Rank(), i)
						if iso.worker != p || iso.phase != i {
							return fmt.Errorf("%s: rank %d, epoch %d, phase %d: trains partition %d in phase %d, want %d", name, w.Rank(), e, i, iso.worker, iso.phase, p)
						}
						b, x := iso.sc.Partition(p, s)
						want := grappa.Build(iso.adj, iso.ch, iso.train, b, x, iso.kind, iso.hops)
						if !slices.Equal(iso.part.Verts, want.Verts) || !slices.Equal(iso.part.Train, want.Train) {
							return fmt.Errorf("%s: rank %d, epoch %d, phase %d: the partition is not slot (%d, %d)'s", name, w.Rank(), e, i, s, p)
						}
						for _, v := range iso.vertices(step - 1) {
							if _, in := slices.BinarySearch(want.Verts, v); !in {
								return fmt.Errorf("%s: rank %d, step %d: batch vertex %d outside the partition", name, w.Rank(), step-1, v)
							}
						}
					}
					mu.Lock()
					trained[e][iso.worker]++
					mu.Unlock()
				}
				m.EndEpoch()
			}
			return nil
		})
		for r, err := range errs {
			if err != nil {
				t.Fatalf("rank %d: %v", r, err)
			}
		}
		for e, n := range trained {
			for p, k := range n {
				if k != 1 {
					t.Errorf("%s: epoch %d trained partition %d %d times", name, e, p, k)
				}
			}
		}
	}
}
