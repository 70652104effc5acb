package plan

import (
	"fmt"
	"math"

	"scalegnn/collectives"
	"scalegnn/gcn"
	"scalegnn/grid"
	"scalegnn/internal/memlimit"
	"scalegnn/jobfile"
	"scalegnn/perfmodel"
)

// maxSuggestedRanks bounds the launches CheckMemory searches for a grid
// that fits.
const maxSuggestedRanks = 1 << 12

// CheckMemory is the memory check before loading (runtime.mem_check): it
// returns an error, one line, when the performance model's predicted peak
// memory of this rank (rankMemory: the model of the job's algorithm, at
// its coordinates in the job's grid) exceeds what the rank may use: the smallest of
// grid.mem_per_rank and the limits found (memlimit.Detect), those shared
// by the node divided by its ranksPerNode ranks. The error names the
// prediction, the limit and where it comes from, and the fastest grid
// that would fit in it. The check needs the graph's size, known without
// loading for generated and prepared data (EstimateGraphSize); it takes
// milliseconds.
//
// runtime.mem_check = false keeps only the process's own hard limit, the
// address space of ulimit -v (limits that are not PerNode): beyond it
// every allocation fails and Go can only crash with a goroutine dump,
// while the other limits are estimates a user may know better than.
func CheckMemory(cfg *jobfile.Config, rank, ranksPerNode int, limits []memlimit.Limit) error {
	check := *cfg
	if !cfg.Runtime.MemCheck {
		check.Grid.MemPerRank = ""
		var own []memlimit.Limit
		for _, l := range limits {
			if !l.PerNode {
				own = append(own, l)
			}
		}
		limits = own
	}
	cfg = &check
	limit, from, gs, ok, err := limitAndSize(cfg, ranksPerNode, limits)
	if err != nil || !ok {
		return err
	}
	shape := grid.Shape{D: cfg.Grid.D, X: cfg.Grid.X, Y: cfg.Grid.Y, Z: cfg.Grid.Z}
	need := rankMemory(cfg, gs, shape, rank).Total()
	if need <= limit {
		return nil
	}
	way := "or set runtime.mem_check = false to run anyway"
	if !cfg.Runtime.MemCheck {
		way = "or raise ulimit -v"
	}
	return fmt.Errorf("%s: rank %d's predicted peak memory on grid %s is %s, more than the %s it may use (%s); %s; %s",
		cfg.Label(), rank, shape, perfmodel.FormatBytes(need), perfmodel.FormatBytes(limit), from,
		fittingGrid(cfg, gs, shape.Ranks(), ranksPerNode, limit, perfmodel.Memory.Total), way)
}

// limitAndSize is what a rank may use (MemoryLimit) and, when there is a
// limit, the graph's estimated size: what a check against the limit
// needs first.
func limitAndSize(cfg *jobfile.Config, ranksPerNode int, limits []memlimit.Limit) (limit int64, from string, gs GraphSize, ok bool, err error) {
	limit, from, ok, err = MemoryLimit(cfg, ranksPerNode, limits)
	if err != nil || !ok {
		return 0, "", GraphSize{}, false, err
	}
	gs, err = EstimateGraphSize(cfg.Dataset)
	return limit, from, gs, err == nil, err
}

// MemoryLimit is what a rank may use, the one rule for it: the smallest
// of grid.mem_per_rank and limits, those shared by the node (PerNode)
// divided by its ranksPerNode ranks. It says where the limit comes from;
// ok is false when there is none. The memory check (CheckMemory) refuses
// a job beyond it and grid.auto (ResolveAutoGrid) chooses a grid within it.
func MemoryLimit(cfg *jobfile.Config, ranksPerNode int, limits []memlimit.Limit) (limit int64, from string, ok bool, err error) {
	if cfg.Grid.MemPerRank != "" {
		limit, err = perfmodel.ParseBytes(cfg.Grid.MemPerRank)
		if err != nil {
			return 0, "", false, fmt.Errorf("%s: grid.mem_per_rank = %v", cfg.Label(), err)
		}
		from, ok = "grid.mem_per_rank = "+cfg.Grid.MemPerRank, true
	}
	if b, f, found := osLimit(ranksPerNode, limits); found && (!ok || b < limit) {
		limit, from, ok = b, f, true
	}
	return limit, from, ok, nil
}

// osLimit is the smallest of limits per rank, those shared by the node
// divided by its ranksPerNode ranks, and where it comes from.
func osLimit(ranksPerNode int, limits []memlimit.Limit) (limit int64, from string, ok bool) {
	rpn := max(ranksPerNode, 1)
	for _, l := range limits {
		b, f := l.Bytes, fmt.Sprintf("%s %s", l.From, perfmodel.FormatBytes(l.Bytes))
		if l.PerNode {
			b /= int64(rpn)
			f += fmt.Sprintf(" / %d ranks on the node", rpn)
			if rpn == 1 {
				f = f[:len(f)-len("s on the node")] + " on the node"
			}
		}
		if !ok || b < limit {
			limit, from, ok = b, f, true
		}
	}
	return limit, from, ok
}

// AgreeLimits returns the smallest per-rank limit of limits (osLimit) over
// the ranks of world, as a limit of each rank's own (not PerNode). Every
// rank computes grid.auto's choice alone, so each must choose within the
// same limit, while the memory available differs from node to node and
// from moment to moment. It is collective: every rank calls it, with nil
// limits when it found none or could not detect them.
func AgreeLimits(world collectives.Comm, ranksPerNode int, limits []memlimit.Limit) ([]memlimit.Limit, error) {
	own, from, ok := osLimit(ranksPerNode, limits)
	if !ok {
		own = math.MaxInt64
	}
	least := []int64{own}
	if err := world.AllReduceI64(least, collectives.Min); err != nil {
		return nil, err
	}
	switch {
	case least[0] == math.MaxInt64:
		return nil, nil
	case least[0] != own:
		from = "another rank's limits"
	}
	return []memlimit.Limit{{Bytes: least[0], From: "the smallest over the ranks (" + from + "):"}}, nil
}

// fittingGrid names the fastest grid, on the launch's ranks or on the
// fewest ranks doubling from there, up to maxSuggestedRanks, whose every
// rank's need (the part of perfmodel's prediction held in the memory
// checked: Memory.Total for the host, deviceBytes for a GPU) fits in
// memPerRank. Unless the data are prepared, every rank holds the whole
// graph while loading, which no grid divides: when need counts it and
// that alone does not fit, it names the grid that would fit once the data
// are prepared (scalegnn prepare), loaded shard by shard.
func fittingGrid(cfg *jobfile.Config, gs GraphSize, ranks, ranksPerNode int, memPerRank int64, need func(perfmodel.Memory) int64) string {
	fits := fmt.Sprintf("the fastest grid that fits in %s per rank is", perfmodel.FormatBytes(memPerRank))
	if g, ok := fastestFitting(cfg, gs, ranks, ranksPerNode, memPerRank, need); ok {
		return fits + " " + g
	}
	none := fmt.Sprintf("no grid of up to %d ranks fits in %s per rank", min(maxSuggestedRanks, max(gs.N, 1)), perfmodel.FormatBytes(memPerRank))
	if gs.Sharded || need(perfmodel.Memory{Dataset: 1}) == 0 {
		return none // preparing the dataset would not change the need
	}
	gs.Sharded = true
	if g, ok := fastestFitting(cfg, gs, ranks, ranksPerNode, memPerRank, need); ok {
		return fmt.Sprintf("%s while every rank loads the whole graph; prepare the dataset (scalegnn prepare) to load it sharded: then %s %s", none, fits, g)
	}
	return none + ", even with the dataset prepared"
}

// fastestFitting finds the fewest ranks, doubling from ranks, with a grid
// whose rank 0 (which holds the largest blocks) needs at most memPerRank,
// and returns the fastest fitting grid of that many ranks.
func fastestFitting(cfg *jobfile.Config, gs GraphSize, ranks, ranksPerNode int, memPerRank int64, need func(perfmodel.Memory) int64) (string, bool) {
	j := PerfJob(cfg, gs)
	d := 0
	if cfg.Train.Mode == gcn.FullGraph {
		d = 1
	}
	for r := max(ranks, 1); r <= min(maxSuggestedRanks, j.N); r *= 2 {
		shapes, err := perfmodel.Enumerate(r, d)
		if err != nil {
			return "", false
		}
		fit := false
		for _, s := range shapes {
			if need(perfmodel.EstimateMemory(j, s, perfmodel.Coords{})) <= memPerRank {
				fit = true
				break
			}
		}
		if !fit {
			continue
		}
		m := perfmodel.DefaultMachine()
		if cfg.Grid.Machine != "" {
			if mm, err := perfmodel.LoadMachine(cfg.Grid.Machine); err == nil {
				m = mm
			}
		}
		// Without a limit Predict orders every grid by epoch time: the
		// first within memPerRank by need is the fastest that fits.
		preds, err := perfmodel.Predict(j, m, perfmodel.Options{Ranks: r, RanksPerNode: ranksPerNode})
		if err != nil {
			return "", false
		}
		for _, p := range preds {
			if n := need(p.Memory); n <= memPerRank {
				g := fmt.Sprintf("%s on %d ranks (%s per rank)", p.Grid, r, perfmodel.FormatBytes(n))
				if rpn := max(ranksPerNode, 1); r > ranks && r > rpn {
					// More ranks keep memPerRank only on more nodes: on
					// the same ones a node's memory is shared by more.
					unit := "ranks"
					if rpn == 1 {
						unit = "rank"
					}
					g += fmt.Sprintf(" over %d nodes of %d %s", (r+rpn-1)/rpn, rpn, unit)
				}
				return g, true
			}
		}
		return "", false
	}
	return "", false
}
