package perfmodel

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"scalegnn/internal/enum"
	"scalegnn/internal/tomlx"
)

// SpMM forms.
const (
	// SpMMLinear times one local SpMM dst (rows × w) = A (nnz nonzeros) · B
	// (inner × w) as Call + NNZ·nnz + FMA·nnz·w + Out·rows·w + In·inner·w
	// + Miss·nnz·⌈4w/64⌉·max(0, 1 − Cache/(4·inner·w)): the last term is
	// the cache lines of B's rows fetched from memory when B does not fit
	// in the rank's share of the cache. The per-nonzero term is what makes
	// a skinny dense operand (small w) slower than a wide one of the same
	// flops (Plexus Table 2).
	SpMMLinear = "linear"
	// SpMMPlexus is Plexus eq. 4.4 summed over the layers:
	// sqrt(NNZ·D_l)·(Flops + Fwd·N/G_P·G_Q/D_l + Bwd·N/G_R·G_Q/D_l),
	// with NNZ and N of the whole graph and D_l the layer's input width.
	SpMMPlexus = "plexus"
)

// SpMMCost holds the coefficients of the SpMM time, in seconds.
type SpMMCost struct {
	Form string `toml:"form"`
	// Linear form.
	Call float64 `toml:"call_s"`
	NNZ  float64 `toml:"nnz_s"`
	FMA  float64 `toml:"fma_s"`
	Out  float64 `toml:"out_s"`
	In   float64 `toml:"in_s"`
	// Miss is the cost of a cache line of B fetched from memory, Cache the
	// bytes of B that stay cached (optional; 0 leaves the term out).
	Miss  float64 `toml:"miss_s"`
	Cache float64 `toml:"cache_bytes"`
	// Plexus form.
	Flops float64 `toml:"flops_s"`
	Fwd   float64 `toml:"fwd_penalty_s"`
	Bwd   float64 `toml:"bwd_penalty_s"`
}

// GEMMCost times one GEMM of M×K by K×N as Call + FMA·M·N·K +
// Elem·(M·K + K·N + M·N), in seconds.
type GEMMCost struct {
	Call float64 `toml:"call_s"`
	FMA  float64 `toml:"fma_s"`
	Elem float64 `toml:"elem_s"`
}

// GEMMCosts are the costs of the three GEMM forms a step runs.
type GEMMCosts struct {
	NN GEMMCost `toml:"nn"` // H·W
	TN GEMMCost `toml:"tn"` // Hᵀ·dZ
	NT GEMMCost `toml:"nt"` // dZ·Wᵀ
}

// Products are the costs of the SpMMs and GEMMs in mixed precision
// (train.precision = "bf16"), measured through device.BF16Products: the
// rounding of their float32 operands into the device's staging counts,
// as it does for every method but the 3D/4D model's GCN and SAGE layers,
// which round each operand once (so their GEMMs are priced a little
// high). The SpMM form is always linear.
type Products struct {
	SpMM SpMMCost  `toml:"spmm"`
	GEMM GEMMCosts `toml:"gemm"`
}

// Link is the cost of moving data over one kind of connection: Latency
// seconds per message step and Bandwidth in GB/s (1e9 bytes per second).
// For inter-node links the bandwidth is a node's injection bandwidth,
// shared by the groups that leave the node at once (Plexus eq. 4.6).
type Link struct {
	Latency   float64 `toml:"latency_s"`
	Bandwidth float64 `toml:"bandwidth_gbs"`
	// LargeFrom and Large price the all-reduces of at least LargeFrom
	// bytes: Large more seconds per byte of the message, on top of the
	// latency and bandwidth terms (CollectiveTime). MPI's all-reduce
	// takes a temporary buffer of the message's size from malloc on every
	// call, and glibc's malloc serves a block of 32 MiB or more
	// (DEFAULT_MMAP_THRESHOLD_MAX) with a fresh mmap and gives it back
	// with munmap, so every such call page-faults its whole buffer in
	// again; with 8 ranks on 2 cores that costs more than ten times the
	// bandwidth term (README, "CAGNET 1.5D"). Calibrate measures Large; a
	// profile without the keys (0) leaves the term out.
	LargeFrom float64 `toml:"large_from_bytes,omitzero"`
	Large     float64 `toml:"large_s_per_byte,omitzero"`
}

// Machine holds the coefficients of the model for one kind of machine and
// launch (ranks per node, threads per rank).
type Machine struct {
	Name        string `toml:"name"`
	Description string `toml:"description"`
	// RanksPerNode is the default for predictions; 0 means all ranks on
	// one node.
	RanksPerNode int `toml:"ranks_per_node"`
	// ThreadsPerRank is the kernel threads per rank the coefficients were
	// measured with (informational).
	ThreadsPerRank int `toml:"threads_per_rank"`
	// Device is the device the coefficients were measured on (Devices:
	// "cpu", "native" or "cuda"; Calibrate records the device's Name), so
	// that a GPU profile is not taken for a CPU one. A profile without the
	// key was written before GPUs and means "cpu"; "" in a Machine built
	// in code means the same.
	Device string `toml:"device"`

	SpMM SpMMCost  `toml:"spmm"`
	GEMM GEMMCosts `toml:"gemm"`
	// BF16 prices the SpMMs and GEMMs of a job in mixed precision
	// (Job.Precision bf16); Calibrate measures it. A profile without the
	// section (the zero Products: HasBF16 false) prices them as float32,
	// and perfmodel predict says so.
	BF16        Products `toml:"bf16,omitempty"`
	Elementwise struct {
		// Elem is the time per element of an element-wise pass.
		Elem float64 `toml:"elem_s"`
	} `toml:"elementwise"`
	Comm struct {
		Intra Link `toml:"intra"`
		Inter Link `toml:"inter"`
		// Bcast, when set (bandwidth > 0), times a broadcast within a node as
		// ⌈log2 p⌉·Latency + M/Bandwidth (MPI pipelines large broadcasts,
		// so the bandwidth term does not grow with p), measured by
		// Calibrate; without it a broadcast is timed on the group's link
		// as a binomial tree (CollectiveTime). 1.5D's staged broadcasts
		// use it (PredictCAGNET).
		Bcast Link `toml:"bcast,omitempty"`
	} `toml:"comm"`
	// Disk times cold reads of a prepared dataset (out-of-core isolated
	// training); a profile without it takes DefaultDiskReadBandwidth.
	Disk DiskCost `toml:"disk,omitempty"`
	// Fit records how well calibration fitted (informational).
	Fit map[string]float64 `toml:"fit,omitempty"`
}

// Devices are the values of Machine.Device: the names of package device's
// devices (Device.Name).
var Devices = []string{"cpu", "native", "cuda"}

// DefaultMachine is used when no profile is given: one CPU rank with a few
// cores per rank on a commodity node. SpMM 1 ns per nonzero plus 0.25 ns
// per multiply-add; GEMM 0.05 ns per multiply-add (about 40 Gflop/s) plus
// 0.5 ns per element touched; element-wise passes 1 ns per element;
// intra-node links 1 µs latency and 5 GB/s (shared-memory MPI), inter-node
// 5 µs and 10 GB/s per node (100 Gb/s). Calibrate for anything better.
func DefaultMachine() *Machine {
	m := &Machine{Name: "default", Description: "built-in defaults for a CPU node without a calibrated profile", Device: "cpu"}
	m.SpMM = SpMMCost{Form: SpMMLinear, Call: 5e-6, NNZ: 1e-9, FMA: 0.25e-9, Out: 0.5e-9, In: 0}
	g := GEMMCost{Call: 5e-6, FMA: 0.05e-9, Elem: 0.5e-9}
	m.GEMM.NN, m.GEMM.TN, m.GEMM.NT = g, g, g
	m.Elementwise.Elem = 1e-9
	m.Comm.Intra = Link{Latency: 1e-6, Bandwidth: 5}
	m.Comm.Inter = Link{Latency: 5e-6, Bandwidth: 10}
	return m
}

//go:embed profiles/*.toml
var profiles embed.FS

// Profiles returns the names of the profiles built into the binary.
func Profiles() []string {
	entries, _ := fs.ReadDir(profiles, "profiles")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".toml"))
	}
	sort.Strings(names)
	return names
}

// LoadMachine reads a machine profile: a TOML file, or the name of a
// profile built into the binary (see Profiles) when no such file exists.
func LoadMachine(path string) (*Machine, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !strings.ContainsAny(path, `/\`) {
		name := strings.TrimSuffix(path, ".toml")
		if b, berr := profiles.ReadFile("profiles/" + name + ".toml"); berr == nil {
			return ParseMachine("profile "+name, b)
		}
		return nil, fmt.Errorf("machine profile %s: no such file, and no built-in profile of that name (built in: %s)", path, strings.Join(Profiles(), ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("machine profile: %w", err)
	}
	return ParseMachine(path, data)
}

// ParseMachine reads a profile's contents; name labels error messages.
// Every coefficient must be present, finite and (except the Plexus
// penalties, which the paper fitted with either sign) non-negative. The
// file is decoded as strictly as a job file (package tomlx): unknown keys
// with a suggestion, wrong types and syntax errors with their position.
func ParseMachine(name string, data []byte) (*Machine, error) {
	var m Machine
	md, err := tomlx.Decode(name, data, &m, tomlx.Options{})
	if err != nil {
		return nil, err
	}
	required := []string{"spmm.form", "elementwise.elem_s",
		"comm.intra.latency_s", "comm.intra.bandwidth_gbs", "comm.inter.latency_s", "comm.inter.bandwidth_gbs"}
	required = append(required, gemmKeys("")...)
	if md.IsDefined("bf16") {
		required = append(required, gemmKeys("bf16.")...)
		required = append(required, linearKeys("bf16.")...)
	}
	switch m.SpMM.Form {
	case SpMMLinear:
		required = append(required, linearKeys("")...)
	case SpMMPlexus:
		required = append(required, "spmm.flops_s", "spmm.fwd_penalty_s", "spmm.bwd_penalty_s")
	default:
		if md.IsDefined("spmm", "form") {
			return nil, fmt.Errorf("%s: spmm.form = %q: expected %q or %q", name, m.SpMM.Form, SpMMLinear, SpMMPlexus)
		}
	}
	for _, k := range required {
		if !md.IsDefined(strings.Split(k, ".")...) {
			return nil, fmt.Errorf("%s: missing key %s", name, k)
		}
	}
	switch {
	case !md.IsDefined("device"):
		m.Device = "cpu" // written before the key existed, on a CPU
	case m.Device == "":
		return nil, fmt.Errorf("%s: device = \"\": expected %s (or no device key, which means \"cpu\")", name, oneOf(Devices))
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &m, nil
}

// HasBF16 reports whether m prices products in mixed precision (a
// profile with a bf16 section, whose SpMM form is never empty).
func (m *Machine) HasBF16() bool { return m.BF16 != (Products{}) }

// gemmKeys are the GEMM costs' keys under prefix.
func gemmKeys(prefix string) []string {
	var keys []string
	for _, op := range []string{"nn", "tn", "nt"} {
		for _, k := range []string{"call_s", "fma_s", "elem_s"} {
			keys = append(keys, prefix+"gemm."+op+"."+k)
		}
	}
	return keys
}

// linearKeys are the linear SpMM form's keys under prefix.
func linearKeys(prefix string) []string {
	var keys []string
	for _, k := range []string{"form", "call_s", "nnz_s", "fma_s", "out_s", "in_s"} {
		keys = append(keys, prefix+"spmm."+k)
	}
	return keys
}

// Validate reports the first coefficient out of range, by its key.
func (m *Machine) Validate() error {
	type kv struct {
		key    string
		v      float64
		signed bool
	}
	var vals []kv
	products := func(prefix string, sp SpMMCost, gm GEMMCosts) {
		vals = append(vals, kv{prefix + "spmm.call_s", sp.Call, false}, kv{prefix + "spmm.nnz_s", sp.NNZ, false},
			kv{prefix + "spmm.fma_s", sp.FMA, false}, kv{prefix + "spmm.out_s", sp.Out, false}, kv{prefix + "spmm.in_s", sp.In, false},
			kv{prefix + "spmm.miss_s", sp.Miss, false}, kv{prefix + "spmm.cache_bytes", sp.Cache, false},
			kv{prefix + "spmm.flops_s", sp.Flops, false}, kv{prefix + "spmm.fwd_penalty_s", sp.Fwd, true}, kv{prefix + "spmm.bwd_penalty_s", sp.Bwd, true})
		for _, g := range []struct {
			op string
			c  GEMMCost
		}{{"nn", gm.NN}, {"tn", gm.TN}, {"nt", gm.NT}} {
			vals = append(vals, kv{prefix + "gemm." + g.op + ".call_s", g.c.Call, false}, kv{prefix + "gemm." + g.op + ".fma_s", g.c.FMA, false},
				kv{prefix + "gemm." + g.op + ".elem_s", g.c.Elem, false})
		}
	}
	products("", m.SpMM, m.GEMM)
	if m.HasBF16() {
		products("bf16.", m.BF16.SpMM, m.BF16.GEMM)
	}
	vals = append(vals, kv{"elementwise.elem_s", m.Elementwise.Elem, false}, kv{"disk.read_bytes_per_s", m.Disk.ReadBandwidth, false},
		kv{"comm.intra.latency_s", m.Comm.Intra.Latency, false}, kv{"comm.inter.latency_s", m.Comm.Inter.Latency, false})
	for _, l := range []struct {
		key string
		l   Link
	}{{"comm.intra", m.Comm.Intra}, {"comm.inter", m.Comm.Inter}} {
		vals = append(vals, kv{l.key + ".large_from_bytes", l.l.LargeFrom, false}, kv{l.key + ".large_s_per_byte", l.l.Large, false})
	}
	for _, v := range vals {
		switch {
		case v.signed && !tomlx.NumberIn(v.v, "()", math.Inf(-1), math.Inf(1)):
			return fmt.Errorf("%s = %v: expected a finite number", v.key, v.v)
		case !v.signed && !tomlx.NumberIn(v.v, "[)", 0, math.Inf(1)):
			return fmt.Errorf("%s = %v: expected a finite number >= 0", v.key, v.v)
		}
	}
	for _, l := range []struct {
		key string
		v   float64
	}{{"comm.intra.bandwidth_gbs", m.Comm.Intra.Bandwidth}, {"comm.inter.bandwidth_gbs", m.Comm.Inter.Bandwidth}} {
		if !tomlx.NumberIn(l.v, "()", 0, math.Inf(1)) {
			return fmt.Errorf("%s = %v: expected a finite number > 0", l.key, l.v)
		}
	}
	if m.SpMM.Form != SpMMLinear && m.SpMM.Form != SpMMPlexus {
		return fmt.Errorf("spmm.form = %q: expected %q or %q", m.SpMM.Form, SpMMLinear, SpMMPlexus)
	}
	if m.HasBF16() && (m.BF16.SpMM.Form != SpMMLinear || m.SpMM.Form != SpMMLinear) {
		return fmt.Errorf("bf16.spmm.form = %q with spmm.form = %q: bf16 costs need the %q form in both (Calibrate writes them so); remove the bf16 section to price bf16 products as float32",
			m.BF16.SpMM.Form, m.SpMM.Form, SpMMLinear)
	}
	if b := m.Comm.Bcast; b != (Link{}) && (!tomlx.NumberIn(b.Latency, "[)", 0, math.Inf(1)) || !tomlx.NumberIn(b.Bandwidth, "()", 0, math.Inf(1))) {
		return fmt.Errorf("comm.bcast = {latency_s = %v, bandwidth_gbs = %v}: expected latency >= 0 and bandwidth > 0, finite (or no comm.bcast)", b.Latency, b.Bandwidth)
	}
	if b := m.Comm.Bcast; b.LargeFrom != 0 || b.Large != 0 {
		return fmt.Errorf("comm.bcast has large_from_bytes or large_s_per_byte: a broadcast takes no temporary buffer; remove them (they belong in comm.intra and comm.inter)")
	}
	if m.RanksPerNode < 0 {
		return fmt.Errorf("ranks_per_node = %d: expected an integer >= 0 (0: all ranks on one node)", m.RanksPerNode)
	}
	if m.Device != "" && !slices.Contains(Devices, m.Device) {
		return fmt.Errorf("device = %q: expected %s", m.Device, oneOf(Devices))
	}
	return nil
}

// oneOf returns `one of "a", "b"`, in enum's words.
func oneOf(names []string) string { return (&enum.Error{Allowed: names}).Expected() }

// WriteFile writes m as a TOML profile, with a header comment.
func (m *Machine) WriteFile(path, header string) error {
	var buf bytes.Buffer
	for _, line := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		fmt.Fprintf(&buf, "# %s\n", line)
	}
	if err := toml.NewEncoder(&buf).Encode(m); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil && filepath.Dir(path) != "." {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
