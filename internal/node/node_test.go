package node

import (
	"errors"
	"math/bits"
	"runtime"
	"sync"
	"testing"

	"scalegnn/collectives"
)

func TestThreads(t *testing.T) {
	for _, c := range []struct {
		name                 string
		cores, sharing, want int
	}{
		{"alone on 2 cores (-np 1)", 2, 1, 2},
		{"bound to one core each (--bind-to core)", 1, 1, 1},
		{"8 unbound ranks on 2 cores", 2, 8, 1},
		{"2 unbound ranks on 2 cores", 2, 2, 1},
		{"4 ranks on 16 cores", 16, 4, 4},
		{"3 ranks on 16 cores, rounded down", 16, 3, 5},
		{"srun --cpus-per-task=8, bound", 8, 1, 8},
	} {
		if got := Threads(c.cores, c.sharing); got != c.want {
			t.Errorf("%s: Threads(%d, %d) = %d, want %d", c.name, c.cores, c.sharing, got, c.want)
		}
	}
	for _, bad := range [][2]int{{0, 1}, {1, 0}, {-1, 2}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Threads(%d, %d) did not panic", bad[0], bad[1])
				}
			}()
			Threads(bad[0], bad[1])
		}()
	}
}

// cpus returns a one-word mask of the given CPUs.
func cpus(cs ...int) []uint64 {
	m := []uint64{0}
	for _, c := range cs {
		m[0] |= 1 << c
	}
	return m
}

// TestDetect runs Detect's collective on in-process worlds whose ranks
// are given the masks that launchers give real ranks, and checks every
// rank's threads against the rule.
func TestDetect(t *testing.T) {
	wide := make([]uint64, 2) // CPUs 64 and 127 only: the second word
	wide[1] = 1<<0 | 1<<63
	for _, c := range []struct {
		name     string
		masks    [][]uint64
		threads  []int
		sharing  []int
		min, max int
	}{
		{"-np 1 on 2 cores", [][]uint64{cpus(0, 1)}, []int{2}, []int{1}, 2, 2},
		{"--bind-to core -np 2", [][]uint64{cpus(0), cpus(1)}, []int{1, 1}, []int{1, 1}, 1, 1},
		{"--bind-to none -np 8 on 2 cores",
			[][]uint64{cpus(0, 1), cpus(0, 1), cpus(0, 1), cpus(0, 1), cpus(0, 1), cpus(0, 1), cpus(0, 1), cpus(0, 1)},
			[]int{1, 1, 1, 1, 1, 1, 1, 1}, []int{8, 8, 8, 8, 8, 8, 8, 8}, 1, 1},
		{"2 ranks bound to 4 cores each", [][]uint64{cpus(0, 1, 2, 3), cpus(4, 5, 6, 7)}, []int{4, 4}, []int{1, 1}, 4, 4},
		{"2 ranks per socket of 4 cores", [][]uint64{cpus(0, 1, 2, 3), cpus(0, 1, 2, 3), cpus(4, 5, 6, 7), cpus(4, 5, 6, 7)},
			[]int{2, 2, 2, 2}, []int{2, 2, 2, 2}, 2, 2},
		{"one rank unbound beside a bound one", [][]uint64{cpus(0, 1, 2, 3), cpus(3)}, []int{2, 1}, []int{2, 2}, 1, 2},
		{"masks of different lengths", [][]uint64{cpus(0, 1), wide}, []int{2, 2}, []int{1, 1}, 2, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			world := collectives.NewLocalWorld(len(c.masks))
			infos := make([]Info, len(world))
			errs := make([]error, len(world))
			var wg sync.WaitGroup
			for r, comm := range world {
				wg.Add(1)
				go func() {
					defer wg.Done()
					infos[r], errs[r] = detect(comm, func() ([]uint64, error) { return c.masks[r], nil })
				}()
			}
			wg.Wait()
			for r, info := range infos {
				if errs[r] != nil {
					t.Fatalf("rank %d: %v", r, errs[r])
				}
				cores := 0
				for _, w := range c.masks[r] {
					cores += bits.OnesCount64(w)
				}
				want := Info{RanksPerNode: len(c.masks), LocalRank: r, Cores: cores, Sharing: c.sharing[r], Threads: c.threads[r], MinThreads: c.min, MaxThreads: c.max}
				if info != want {
					t.Errorf("rank %d: %+v, want %+v", r, info, want)
				}
			}
		})
	}
}

// TestDetectMaskError checks that a rank whose mask cannot be read still
// takes part in the collectives (its peers return) and reports the error.
func TestDetectMaskError(t *testing.T) {
	world := collectives.NewLocalWorld(2)
	boom := errors.New("no mask")
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r, comm := range world {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[r] = detect(comm, func() ([]uint64, error) {
				if r == 1 {
					return nil, boom
				}
				return cpus(0, 1), nil
			})
		}()
	}
	wg.Wait()
	if errs[0] != nil || !errors.Is(errs[1], boom) {
		t.Fatalf("errors %v, want nil on rank 0 and %v on rank 1", errs, boom)
	}
}

// TestAffinity checks the mask against runtime.NumCPU, which Go reads
// from the same affinity mask when the process starts.
func TestAffinity(t *testing.T) {
	mask, err := Affinity()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, w := range mask {
		n += bits.OnesCount64(w)
	}
	if n != runtime.NumCPU() {
		t.Errorf("affinity mask holds %d CPUs, runtime.NumCPU() = %d", n, runtime.NumCPU())
	}
}

// TestDetectOneRank runs the real Detect on a one-rank world: all the
// CPUs of the process, one rank.
func TestDetectOneRank(t *testing.T) {
	info, err := Detect(collectives.NewLocalWorld(1)[0])
	if err != nil {
		t.Fatal(err)
	}
	if info.RanksPerNode != 1 || info.Cores != runtime.NumCPU() || info.Threads != runtime.NumCPU() {
		t.Errorf("%+v, want 1 rank with %d cores and threads", info, runtime.NumCPU())
	}
}
