package plan

import (
	"strings"
	"testing"

	"scalegnn/device"
	"scalegnn/jobfile"
)

// TestRuntimeDeviceKeys: runtime.device takes the three device names,
// defaults to "cpu" (device.Host), refuses another name or a misspelt key
// in one line, and refuses the GPU-only keys with a host device.
func TestRuntimeDeviceKeys(t *testing.T) {
	for _, c := range []struct {
		data   string
		device string
		tf32   bool
		cache  string
		want   string // "": accepted
	}{
		{"", jobfile.DeviceCPU, false, "", ""},
		{"[runtime]\ndevice = \"cpu\"\n", jobfile.DeviceCPU, false, "", ""},
		{"[runtime]\ndevice = \"native\"\n", jobfile.DeviceNative, false, "", ""},
		{"[runtime]\ndevice = \"cuda\"\n", jobfile.DeviceCUDA, false, "", ""},
		{"[runtime]\ndevice = \"cuda\"\ntf32 = true\ngpu_cache = \"/scratch/nvrtc\"\n", jobfile.DeviceCUDA, true, "/scratch/nvrtc", ""},
		{"[runtime]\ndevice = \"gpu\"\n", "", false, "", `job.toml: runtime.device = "gpu": expected one of "cpu", "native", "cuda"`},
		{"[runtime]\ndevice = \"CUDA\"\n", "", false, "", `runtime.device = "CUDA": expected one of "cpu", "native", "cuda"`},
		{"[runtime]\ndevice = 1\n", "", false, "", "runtime.device = 1: expected a string"},
		{"[runtime]\ndevcie = \"cuda\"\n", "", false, "", "unknown key runtime.devcie: did you mean runtime.device?"},
		{"[runtime]\ntf32 = true\n", "", false, "", `job.toml: runtime.tf32 = true applies to runtime.device = "cuda", and runtime.device = "cpu": set device = "cuda" or remove tf32`},
		{"[runtime]\ndevice = \"native\"\ntf32 = true\n", "", false, "", `runtime.tf32 = true applies to runtime.device = "cuda", and runtime.device = "native"`},
		{"[runtime]\ntf32 = \"yes\"\ndevice = \"cuda\"\n", "", false, "", `runtime.tf32 = "yes": expected true or false`},
		{"[runtime]\ngpu_cache = \"/tmp/k\"\n", "", false, "", `runtime.gpu_cache = "/tmp/k" applies to runtime.device = "cuda", and runtime.device = "cpu": set device = "cuda" or remove gpu_cache`},
	} {
		cfg, err := jobfile.ParseConfig("job.toml", []byte(c.data))
		if c.want != "" {
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%q: error %v, want one line containing %q", c.data, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.data, err)
			continue
		}
		if r := cfg.Runtime; r.Device != c.device || r.TF32 != c.tf32 || r.GPUCache != c.cache {
			t.Errorf("%q: device %q tf32 %v gpu_cache %q, want %q %v %q", c.data, r.Device, r.TF32, r.GPUCache, c.device, c.tf32, c.cache)
		}
	}
}

// rmat22 is a job whose rank on one GPU is predicted to need 17.6GiB of
// device memory, 21.2GiB in all: the 3.6GiB of the whole graph read before
// sharding stay on the host.
const rmat22 = "[dataset]\nsource = \"rmat\"\n[dataset.rmat]\nscale = 22\nfeatures = 128\n[model]\nlayers = 3\nhidden = 128\n[runtime]\ndevice = \"cuda\"\n"

func TestCheckDeviceMemory(t *testing.T) {
	gib := int64(1) << 30
	gpu := func(free int64, ranks int) GPUShare {
		return GPUShare{Name: "GPU 0", Free: free, Total: 80 * gib, Ranks: ranks}
	}
	for _, c := range []struct {
		name string
		job  string
		rank int
		rpn  int
		gpu  GPUShare
		want []string // nil: accepted
	}{
		{"cora fits", "", 0, 1, gpu(78*gib, 1), nil},
		{"the dataset stays on the host", rmat22, 0, 1, gpu(26*gib, 1), nil},
		{"rmat 22 on a 17GiB GPU", rmat22, 0, 1, gpu(17*gib, 1),
			[]string{"job.toml: rank 0's predicted device memory on grid 1x1x1 (d=1) is 17.6GiB, more than the 17GiB it may use (17GiB free on GPU 0 of 80GiB / 1 rank on it)",
				"the fastest grid that fits in 17GiB per rank is ", "; or set runtime.mem_check = false to run anyway"}},
		{"4 ranks share the GPU", rmat22 + "[grid]\nx = 2\ny = 2\n", 3, 4, gpu(40*gib, 4),
			[]string{"rank 3's predicted device memory on grid 2x2x1 (d=1) is ", "more than the 10GiB it may use (40GiB free on GPU 0 of 80GiB / 4 ranks on it)",
				"the fastest grid that fits in 10GiB per rank is "}},
		{"mem_check = false", rmat22 + "mem_check = false\n", 0, 1, gpu(1*gib, 1), nil},
	} {
		cfg, err := jobfile.ParseConfig("job.toml", []byte(c.job))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		err = CheckDeviceMemory(cfg, c.rank, c.rpn, c.gpu)
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: refused: %v", c.name, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: accepted, want a refusal", c.name)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: message is not one line: %q", c.name, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: message %q does not contain %q", c.name, msg, w)
			}
		}
		checkSuggestion(t, c.name, cfg, msg)
		if strings.Contains(msg, "prepare") {
			t.Errorf("%s: %q suggests preparing the dataset, which stays on the host", c.name, msg)
		}
	}
}

// TestDeviceOutOfMemory: the OutOfMemoryError panic of a GPU allocation
// becomes one line with the allocation, the prediction, the rank's share
// and a grid that fits.
func TestDeviceOutOfMemory(t *testing.T) {
	gib := int64(1) << 30
	for _, c := range []struct {
		name string
		job  string
		gpu  GPUShare
		oom  device.OutOfMemoryError
		want []string
	}{
		{"the prediction was low", rmat22, GPUShare{Name: "GPU 0", Free: 30 * gib, Total: 32 * gib, Ranks: 1},
			device.OutOfMemoryError{Bytes: 4 * gib, Free: gib, Total: 32 * gib, Device: "GPU 0 (H)"},
			[]string{"job.toml: device: GPU 0 (H) is out of memory: 4294967296 bytes asked for with 1073741824 of 34359738368 free; ",
				"rank 0's predicted device memory on grid 1x1x1 (d=1) is 17.6GiB and it may use 30GiB (30GiB free on GPU 0 of 32GiB / 1 rank on it)",
				// 29GiB taken and 4GiB asked for: 33GiB, 1.87 times
				// 17.6GiB, so a grid must be predicted 30GiB / 1.87.
				"; it needed at least 33GiB (29GiB taken since the device was opened and 4GiB asked for), 1.87 times the prediction, so a grid must be predicted to need at most 16GiB per rank",
				"; the fastest grid that fits in 16GiB per rank is "}},
		{"two ranks share the GPU", rmat22 + "[grid]\nx = 2\n", GPUShare{Name: "GPU 0", Free: 40 * gib, Total: 40 * gib, Ranks: 2},
			device.OutOfMemoryError{Bytes: 4 * gib, Free: 0, Total: 40 * gib, Device: "GPU 0 (H)"},
			[]string{"it may use 20GiB (40GiB free on GPU 0 of 40GiB / 2 ranks on it)", "it needed at least 24GiB (20GiB taken since the device was opened and 4GiB asked for)"}},
		{"mem_check = false let a job too large start", rmat22 + "mem_check = false\n", GPUShare{Name: "GPU 0", Free: 15 * gib, Total: 16 * gib, Ranks: 1},
			device.OutOfMemoryError{Bytes: gib, Free: 0, Total: 16 * gib, Device: "GPU 0 (H)"},
			[]string{"GPU 0 (H) is out of memory", "is 17.6GiB and it may use 15GiB", "; the fastest grid that fits in 15GiB per rank is "}},
	} {
		cfg, err := jobfile.ParseConfig("job.toml", []byte(c.job))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		msg := DeviceOutOfMemory(cfg, 0, 1, c.gpu, &c.oom).Error()
		t.Logf("%s: %s", c.name, msg)
		if strings.Contains(msg, "\n") {
			t.Errorf("%s: message is not one line: %q", c.name, msg)
		}
		for _, w := range c.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: message %q does not contain %q", c.name, msg, w)
			}
		}
		checkSuggestion(t, c.name, cfg, msg)
	}
}

func TestGPUSharePerRank(t *testing.T) {
	for _, c := range []struct {
		free  int64
		ranks int
		want  int64
	}{{80, 1, 80}, {80, 3, 26}, {7, 8, 0}} {
		if got := (GPUShare{Free: c.free, Ranks: c.ranks}).PerRank(); got != c.want {
			t.Errorf("%d free / %d ranks = %d, want %d", c.free, c.ranks, got, c.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("PerRank with no rank did not panic")
		}
	}()
	GPUShare{Free: 1}.PerRank()
}
