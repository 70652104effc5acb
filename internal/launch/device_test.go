package launch

import (
	"errors"
	"os"
	"strings"
	"testing"

	"scalegnn/device"
	"scalegnn/internal/node"
	"scalegnn/jobfile"
	"scalegnn/plan"
)

// TestGPUBinding: local rank mod the node's GPUs, and how many ranks of
// the node share each GPU.
func TestGPUBinding(t *testing.T) {
	for _, c := range []struct {
		local, perNode, gpus int
		ordinal, sharing     int
	}{
		{0, 1, 1, 0, 1},
		{0, 1, 4, 0, 1}, // one rank on a 4-GPU node uses GPU 0
		{3, 4, 4, 3, 1}, // one rank per GPU
		{5, 8, 4, 1, 2}, // two ranks per GPU: 1 and 5 on GPU 1
		{4, 8, 4, 0, 2},
		{2, 3, 2, 0, 2}, // 3 ranks on 2 GPUs: 0 and 2 share GPU 0
		{1, 3, 2, 1, 1}, // ... and 1 has GPU 1 alone
		{6, 7, 1, 0, 7}, // every rank on the one GPU
		{1, 2, 8, 1, 1}, // fewer ranks than GPUs
	} {
		o, s := gpuBinding(c.local, c.perNode, c.gpus)
		if o != c.ordinal || s != c.sharing {
			t.Errorf("local rank %d of %d on %d GPUs: GPU %d shared by %d, want GPU %d shared by %d", c.local, c.perNode, c.gpus, o, s, c.ordinal, c.sharing)
		}
	}
	for _, bad := range [][3]int{{0, 1, 0}, {2, 2, 1}, {-1, 2, 1}, {0, 0, 1}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("gpuBinding%v did not panic", bad)
				}
			}()
			gpuBinding(bad[0], bad[1], bad[2])
		}()
	}
}

// TestOpenHostDevice: the host names open host devices, "cpu" the
// fastest of the build, and no GPU memory is checked on them.
func TestOpenHostDevice(t *testing.T) {
	info := node.Info{RanksPerNode: 1}
	for _, c := range []struct{ name, want string }{
		{jobfile.DeviceCPU, device.Host(1).Name()},
		{jobfile.DeviceNative, "native"},
	} {
		rd, err := OpenDevice(DeviceRequest{What: "runtime.device = " + c.name, Name: c.name, Threads: 1}, 0, info, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if rd.Dev.Name() != c.want {
			t.Errorf("%s opened %s, want %s", c.name, rd.Dev.Name(), c.want)
		}
		rd.Measure()
		if rd.share != (plan.GPUShare{}) || rd.CheckMemory(nil, 0, info) != nil {
			t.Errorf("%s: a host device has a GPU share %+v", c.name, rd.share)
		}
	}
	if _, err := OpenDevice(DeviceRequest{What: "-device tpu", Name: "tpu"}, 0, info, nil); err == nil || !strings.HasPrefix(err.Error(), "-device tpu: ") {
		t.Errorf("unknown device: %v", err)
	}
}

// TestGuardOutOfMemory: a GPU's OutOfMemoryError panic becomes the one
// line of plan.DeviceOutOfMemory; other panics are not taken.
func TestGuardOutOfMemory(t *testing.T) {
	cfg, err := jobfile.ParseConfig("job.toml", []byte("[runtime]\ndevice = \"cuda\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	info := node.Info{RanksPerNode: 2}
	oom := &device.OutOfMemoryError{Bytes: 1 << 30, Free: 1 << 20, Total: 8 << 30, Device: "cuda:0"}
	gpu := &RankDevice{sharing: 2, share: plan.GPUShare{Name: "GPU 0", Free: 6 << 30, Total: 8 << 30, Ranks: 2}}
	err = gpu.Guard(cfg, 1, info, func() error { panic(oom) })
	want := plan.DeviceOutOfMemory(cfg, 1, 2, gpu.share, oom)
	if err == nil || err.Error() != want.Error() || !strings.Contains(err.Error(), "rank 1's predicted device memory") {
		t.Errorf("guard: %v, want %v", err, want)
	}
	if err := gpu.Guard(cfg, 1, info, func() error { return os.ErrNotExist }); err != os.ErrNotExist {
		t.Errorf("guard changed f's error: %v", err)
	}
	host := &RankDevice{}
	if err := host.Guard(cfg, 0, info, func() error { panic(oom) }); !errors.Is(err, error(oom)) {
		t.Errorf("guard without a GPU share: %v, want the OutOfMemoryError", err)
	}
	defer func() {
		if r := recover(); r != "other" {
			t.Errorf("another panic: recovered %v, want it to pass through", r)
		}
	}()
	gpu.Guard(cfg, 0, info, func() error { panic("other") })
}
