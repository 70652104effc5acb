package plan

import (
	"go.uber.org/zap"

	"scalegnn/gcn"
	"scalegnn/internal/memlimit"
	"scalegnn/jobfile"
	"scalegnn/perfmodel"
)

// ResolvePartitions fills grappa.partitions of an isolated job that
// leaves it unset and whose predicted memory with one partition per rank
// exceeds what a rank may use (MemoryLimit, on the limits every rank
// agreed on, so every rank chooses the same): the fewest partitions that
// fit (perfmodel.Job.IsolatedPartitionsFor), trained in phases. It leaves
// the job as it is when one partition per rank fits, when no limit is
// known, with runtime.mem_check = false, or when no count fits (the
// memory check then refuses the job and says why); the effective job
// file records a choice.
func ResolvePartitions(cfg *jobfile.Config, ranksPerNode int, limits []memlimit.Limit, log *zap.Logger) error {
	gr := &cfg.Grappa
	if cfg.Train.Mode != gcn.Isolated || gr.Partitions != 0 || !cfg.Runtime.MemCheck {
		return nil
	}
	limit, from, gs, ok, err := limitAndSize(cfg, ranksPerNode, limits)
	if err != nil || !ok {
		return err
	}
	j, w := PerfJob(cfg, gs), cfg.Grid.D
	p, fits := j.IsolatedPartitionsFor(w, limit)
	if !fits || p == w {
		return nil
	}
	gr.Partitions = p
	k := j
	k.Isolated.Partitions = p
	log.Info("grappa.partitions chosen from memory",
		zap.Int("partitions", p), zap.Int("phases", p/w),
		zap.String("predicted_per_rank", perfmodel.FormatBytes(k.IsolatedMemory(w).Total())),
		zap.String("one_per_rank", perfmodel.FormatBytes(j.IsolatedMemory(w).Total())),
		zap.String("limit", perfmodel.FormatBytes(limit)), zap.String("limit_from", from))
	return nil
}
