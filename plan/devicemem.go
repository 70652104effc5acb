package plan

import (
	"errors"
	"fmt"

	"scalegnn/device"
	"scalegnn/grid"
	"scalegnn/jobfile"
	"scalegnn/perfmodel"
)

// GPUShare is what a rank knows of the GPU it is bound to: the memory
// found free when every rank of the node had opened its device, and how
// many ranks of the node are bound to the same GPU (several ranks may
// share one). The memory checks give each of them an equal part.
type GPUShare struct {
	// Name names the GPU in messages, e.g. "GPU 0".
	Name string
	// Free and Total are device.MemoryInfo's, in bytes.
	Free, Total int64
	// Ranks is the number of ranks of the node bound to this GPU, >= 1.
	Ranks int
}

// PerRank is the memory each rank bound to the GPU may use: the free
// memory divided among them.
func (g GPUShare) PerRank() int64 {
	if g.Ranks < 1 {
		panic(fmt.Sprintf("jobs: GPUShare.Ranks = %d: a bound GPU has at least its own rank", g.Ranks))
	}
	return g.Free / int64(g.Ranks)
}

// from says where PerRank comes from, for messages.
func (g GPUShare) from() string {
	s := fmt.Sprintf("%s free on %s of %s / %d rank", perfmodel.FormatBytes(g.Free), g.Name, perfmodel.FormatBytes(g.Total), g.Ranks)
	if g.Ranks != 1 {
		s += "s"
	}
	return s + " on it"
}

// deviceBytes is the part of perfmodel's prediction that a rank holds in
// a GPU's own memory: everything but Memory.Dataset. The adjacency shards,
// the feature, label and mask blocks, gcn's arenas, the parameters with
// their gradients and moments and the communication buffers are all
// device buffers (gcn allocates them through the Device); the whole graph
// that a rank reads before cutting its shards out of it (Dataset) lives
// on the host only and is released before training. The host keeps its
// own copy of the shards as well, which the host check (CheckMemory)
// counts in Memory.Total.
func deviceBytes(m perfmodel.Memory) int64 { return m.Total() - m.Dataset }

// CheckDeviceMemory is the memory check of a GPU (runtime.mem_check),
// after the devices are open and before setup: it returns an error, one
// line, when the rank's predicted device memory (deviceBytes of
// perfmodel.EstimateMemory at its coordinates, the prediction CheckMemory
// uses) exceeds its share of the GPU's free memory (gpu.PerRank). The
// error names the prediction, the free memory and how many ranks share
// it, and the fastest grid whose ranks would fit in that share.
// runtime.mem_check = false skips it. It reads no device, so it is
// tested without a GPU.
func CheckDeviceMemory(cfg *jobfile.Config, rank, ranksPerNode int, gpu GPUShare) error {
	if !cfg.Runtime.MemCheck {
		return nil
	}
	gs, err := EstimateGraphSize(cfg.Dataset)
	if err != nil {
		return err
	}
	shape := cfgShape(cfg)
	need := deviceBytes(rankMemory(cfg, gs, shape, rank))
	limit := gpu.PerRank()
	if need <= limit {
		return nil
	}
	return fmt.Errorf("%s: rank %d's predicted device memory on grid %s is %s, more than the %s it may use (%s); %s; or set runtime.mem_check = false to run anyway",
		cfg.Label(), rank, shape, perfmodel.FormatBytes(need), perfmodel.FormatBytes(limit), gpu.from(),
		fittingGrid(cfg, gs, shape.Ranks(), ranksPerNode, limit, deviceBytes))
}

// DeviceOutOfMemory turns the panic of an allocation the GPU could not
// satisfy (a *device.OutOfMemoryError escaping Setup or Train) into one
// line: what was asked for, the rank's predicted device memory and its
// share of the GPU, and a grid that fits. The rank needed at least what it
// had taken since its device was opened (gpu.Free less the GPU's free
// memory at the failure, divided among the ranks sharing it) plus the
// allocation; when that exceeds the prediction (the GPU's context and the
// libraries' workspaces are not in it, nor is memory the device holds
// beyond gcn's plan), the grid named is one whose prediction, scaled by
// the same ratio, fits in the share. Otherwise (runtime.mem_check = false
// let a job predicted too large start) it fits in the share as predicted.
func DeviceOutOfMemory(cfg *jobfile.Config, rank, ranksPerNode int, gpu GPUShare, oom *device.OutOfMemoryError) error {
	head := fmt.Sprintf("%s: %v", cfg.Label(), oom)
	gs, err := EstimateGraphSize(cfg.Dataset)
	if err != nil {
		return errors.New(head)
	}
	shape := cfgShape(cfg)
	need := deviceBytes(rankMemory(cfg, gs, shape, rank))
	limit := gpu.PerRank()
	msg := fmt.Sprintf("%s; rank %d's predicted device memory on grid %s is %s and it may use %s (%s)",
		head, rank, shape, perfmodel.FormatBytes(need), perfmodel.FormatBytes(limit), gpu.from())
	taken := max(gpu.Free-oom.Free, 0) / int64(gpu.Ranks)
	budget := limit
	if atLeast := taken + oom.Bytes; need > 0 && atLeast > need {
		ratio := float64(atLeast) / float64(need)
		budget = int64(float64(limit) / ratio)
		msg += fmt.Sprintf("; it needed at least %s (%s taken since the device was opened and %s asked for), %.2f times the prediction, so a grid must be predicted to need at most %s per rank",
			perfmodel.FormatBytes(atLeast), perfmodel.FormatBytes(taken), perfmodel.FormatBytes(oom.Bytes), ratio, perfmodel.FormatBytes(budget))
	}
	return fmt.Errorf("%s; %s", msg, fittingGrid(cfg, gs, shape.Ranks(), ranksPerNode, budget, deviceBytes))
}

// cfgShape is the job's grid.
func cfgShape(cfg *jobfile.Config) grid.Shape {
	return grid.Shape{D: cfg.Grid.D, X: cfg.Grid.X, Y: cfg.Grid.Y, Z: cfg.Grid.Z}
}
