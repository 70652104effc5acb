package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
		rd, err := openDevice(deviceRequest{What: "runtime.device = " + c.name, Name: c.name, Threads: 1}, 0, info, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if rd.dev.Name() != c.want {
			t.Errorf("%s opened %s, want %s", c.name, rd.dev.Name(), c.want)
		}
		rd.measure()
		if rd.share != (plan.GPUShare{}) || rd.checkMemory(nil, 0, info) != nil {
			t.Errorf("%s: a host device has a GPU share %+v", c.name, rd.share)
		}
	}
	if _, err := openDevice(deviceRequest{What: "-device tpu", Name: "tpu"}, 0, info, nil); err == nil || !strings.HasPrefix(err.Error(), "-device tpu: ") {
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
	gpu := &rankDevice{sharing: 2, share: plan.GPUShare{Name: "GPU 0", Free: 6 << 30, Total: 8 << 30, Ranks: 2}}
	err = gpu.guard(cfg, 1, info, func() error { panic(oom) })
	want := plan.DeviceOutOfMemory(cfg, 1, 2, gpu.share, oom)
	if err == nil || err.Error() != want.Error() || !strings.Contains(err.Error(), "rank 1's predicted device memory") {
		t.Errorf("guard: %v, want %v", err, want)
	}
	if err := gpu.guard(cfg, 1, info, func() error { return os.ErrNotExist }); err != os.ErrNotExist {
		t.Errorf("guard changed f's error: %v", err)
	}
	host := &rankDevice{}
	if err := host.guard(cfg, 0, info, func() error { panic(oom) }); !errors.Is(err, error(oom)) {
		t.Errorf("guard without a GPU share: %v, want the OutOfMemoryError", err)
	}
	defer func() {
		if r := recover(); r != "other" {
			t.Errorf("another panic: recovered %v, want it to pass through", r)
		}
	}()
	gpu.guard(cfg, 0, info, func() error { panic("other") })
}

// TestCUDAMissing: runtime.device = "cuda" where CUDA cannot be used (no
// library, driver or GPU; CUDA_VISIBLE_DEVICES="" hides a GPU machine's)
// ends with a non-zero exit and one line, device's own error naming what
// is missing (scripts/badinput.sh runs it on 8 ranks).
func TestCUDAMissing(t *testing.T) {
	t.Setenv("CUDA_VISIBLE_DEVICES", "")
	_, derr := device.CUDADevices()
	if derr == nil {
		t.Skip("CUDA_VISIBLE_DEVICES=\"\" still shows a GPU")
	}
	cmd := exec.Command(os.Args[0], "-config", filepath.Join("testdata", "badinput", "cuda_missing.toml"))
	cmd.Env = append(os.Environ(), "SCALEGNN_AS_MAIN=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitFailed {
		t.Fatalf("exit %v, want %d; stderr:\n%s", err, exitFailed, stderr.String())
	}
	lines := errorLines(stderr.String())
	want := `scalegnn: runtime.device = "cuda": ` + derr.Error()
	if len(lines) != 1 || lines[0] != want {
		t.Fatalf("want the one line %q, got:\n%s", want, stderr.String())
	}
	if !strings.Contains(lines[0], "cuda unavailable: ") {
		t.Errorf("%q does not say CUDA is unavailable", lines[0])
	}
	t.Log(lines[0])
}
