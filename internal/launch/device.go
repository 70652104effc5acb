package launch

import (
	"fmt"
	"os"
	"strconv"

	"go.uber.org/zap"

	"scalegnn/device"
	"scalegnn/internal/node"
	"scalegnn/jobfile"
	"scalegnn/plan"
)

// DeviceRequest is what a command asks of a rank's device: a job's
// [runtime] settings, or perfmodel calibrate's -device flag.
type DeviceRequest struct {
	// What names the setting in error messages: runtime.device = "cuda",
	// or -device cuda.
	What string
	// Name is jobfile.DeviceCPU, DeviceNative or DeviceCUDA.
	Name    string
	Threads int // host threads of the host devices
	TF32    bool
	// CacheDir is NVRTC's kernel cache (runtime.gpu_cache); "" is the
	// user cache directory.
	CacheDir string
}

// JobDevice is the device a job's [runtime] asks for, with threads host
// threads.
func JobDevice(cfg *jobfile.Config, threads int) DeviceRequest {
	r := cfg.Runtime
	return DeviceRequest{What: fmt.Sprintf("runtime.device = %q", r.Device), Name: r.Device, Threads: threads, TF32: r.TF32, CacheDir: r.GPUCache}
}

// RankDevice is a rank's open device and, on a GPU, what the memory
// checks need of it.
type RankDevice struct {
	Dev device.Device // the device the rank trains on
	// ordinal is the GPU's among those visible, gpus how many are and
	// sharing the ranks of the node bound to it; all 0 on a host device.
	ordinal, gpus, sharing int
	// share is the GPU's memory each rank bound to it may use, measured
	// by Measure once every rank has opened its device; zero until then
	// and on a host device.
	share plan.GPUShare
}

// gpuBinding is the rule that binds ranks to GPUs: the rank of local rank
// localRank among ranksPerNode on its node runs on GPU localRank mod gpus,
// so the ranks of a node spread over its GPUs in turn and, with more
// ranks than GPUs, several share one; sharing is how many do share the
// rank's GPU. It assumes every rank of the node sees the same GPUs (the
// same CUDA_VISIBLE_DEVICES): a launcher that gives each rank a GPU of
// its own (srun --gpus-per-task=1) shows each rank one GPU, which binds
// right but counts the node's ranks as sharing it.
func gpuBinding(localRank, ranksPerNode, gpus int) (ordinal, sharing int) {
	if gpus < 1 || ranksPerNode < 1 || localRank < 0 || localRank >= ranksPerNode {
		panic(fmt.Sprintf("scalegnn: gpuBinding(local rank %d, %d ranks per node, %d GPUs): need 0 <= local rank < ranks per node and a GPU", localRank, ranksPerNode, gpus))
	}
	ordinal = localRank % gpus
	// Local ranks ordinal, ordinal+gpus, ... below ranksPerNode.
	return ordinal, (ranksPerNode - ordinal + gpus - 1) / gpus
}

// OpenDevice opens this rank's device as req says: a host device, or the
// GPU gpuBinding gives the rank. Every rank calls it and agrees on its
// error, which names req.What and the device's own one-line error (for a
// missing CUDA, the library, driver or GPU that is missing). log records
// the binding of a GPU.
func OpenDevice(req DeviceRequest, rank int, info node.Info, log *zap.Logger) (*RankDevice, error) {
	if req.Name != jobfile.DeviceCUDA {
		dev, err := openHost(req)
		if err != nil {
			return nil, err
		}
		return &RankDevice{Dev: dev}, nil
	}
	n, err := device.CUDADevices()
	if err == nil && n < 1 {
		err = fmt.Errorf("%w: no GPU visible to this process (CUDA_VISIBLE_DEVICES=%s)", device.ErrNoCUDA, strconv.Quote(os.Getenv("CUDA_VISIBLE_DEVICES")))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.What, err)
	}
	ordinal, sharing := gpuBinding(info.LocalRank, max(info.RanksPerNode, 1), n)
	dev, err := device.OpenCUDA(device.CUDAOptions{Ordinal: ordinal, TF32: req.TF32, CacheDir: req.CacheDir})
	if err != nil {
		return nil, fmt.Errorf("%s: GPU %d of %d: %w", req.What, ordinal, n, err)
	}
	if log == nil {
		log = zap.NewNop()
	}
	log.Info("device bound", zap.Int("rank", rank), zap.Int("local_rank", info.LocalRank), zap.Int("gpu", ordinal),
		zap.Int("gpus", n), zap.Int("ranks_on_gpu", sharing), zap.String("device", dev.Describe()))
	return &RankDevice{Dev: dev, ordinal: ordinal, gpus: n, sharing: sharing}, nil
}

// openHost opens a host device: jobfile.DeviceCPU is device.Host, the
// fastest of the build (so that the default job runs with or without
// cgo), and any other name is device.Open's.
func openHost(req DeviceRequest) (device.Device, error) {
	if req.Name == jobfile.DeviceCPU {
		return device.Host(req.Threads), nil
	}
	dev, err := device.Open(req.Name, req.Threads)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.What, err)
	}
	return dev, nil
}

// Measure reads the free memory of a GPU, for the memory checks: call it
// after every rank has opened its device (after agreeing on OpenDevice's
// error), so that the contexts of the ranks sharing the GPU are already
// taken from it. It does nothing on a host device.
func (d *RankDevice) Measure() {
	free, total, ok := device.MemoryInfo(d.Dev)
	if !ok {
		return
	}
	d.share = plan.GPUShare{Name: fmt.Sprintf("GPU %d", d.ordinal), Free: free, Total: total, Ranks: d.sharing}
}

// CheckMemory is the memory check of a GPU (plan.CheckDeviceMemory)
// before setup; nil on a host device, whose memory the check before
// loading (the function CheckMemory) covered.
func (d *RankDevice) CheckMemory(cfg *jobfile.Config, rank int, info node.Info) error {
	if d.share.Ranks == 0 {
		return nil
	}
	return plan.CheckDeviceMemory(cfg, rank, info.RanksPerNode, d.share)
}

// Guard runs f, a step that allocates on the device (jobs.Setup,
// Job.Train, inference), and returns its error; a GPU allocation that
// fails panics with a *device.OutOfMemoryError, which Guard turns into
// plan.DeviceOutOfMemory's one line (the allocation, the prediction, the
// rank's share of the GPU and a grid that fits) instead of an internal
// error with a stack trace. Any other panic goes on to WithMPI.
func (d *RankDevice) Guard(cfg *jobfile.Config, rank int, info node.Info, f func() error) (err error) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		oom, ok := r.(*device.OutOfMemoryError)
		if !ok {
			panic(r)
		}
		if d.share.Ranks == 0 {
			err = oom // no GPU share measured: nothing to compare the need with
			return
		}
		err = plan.DeviceOutOfMemory(cfg, rank, info.RanksPerNode, d.share, oom)
	}()
	return f()
}
