package perfmodel

import (
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"time"

	"scalegnn/collectives"
	"scalegnn/device"
	"scalegnn/spmm"
)

// CalibrateOptions control a calibration run.
type CalibrateOptions struct {
	// Threads is the kernel threads per rank the backend uses (recorded).
	Threads int
	// Quick measures fewer shapes and repetitions (a few seconds).
	Quick bool
	// Log receives progress lines (rank 0 should pass its stderr, the
	// others io.Discard).
	Log io.Writer
	// Name names the profile; default "calibrated".
	Name string
	// DiskDir is where the disk's read bandwidth is measured (the datasets'
	// file system); default the temporary directory.
	DiskDir string
}

// Calibrate measures, on every rank of world at once (so that ranks share
// cores, memory bandwidth and links exactly as in training), the local
// SpMM and GEMM of backend be over a range of shapes, element-wise passes,
// and all-reduce and all-gather over message and group sizes — inside a
// node and, when the launch spans nodes, across nodes — and fits the
// Machine's coefficients by non-negative least squares on relative errors.
// Each time is the median of the repetitions on a rank, then the maximum
// over ranks (the slowest rank sets the pace of a synchronous step).
// Every rank must call it; every rank gets the same Machine.
func Calibrate(world collectives.Comm, dev device.Device, o CalibrateOptions) (*Machine, error) {
	c := &calibrator{world: world, dev: dev, o: o, log: o.Log, reps: 5}
	if c.log == nil {
		c.log = io.Discard
	}
	if o.Quick {
		c.reps = 2
	}
	start := time.Now()
	m := DefaultMachine()
	m.Name = o.Name
	if m.Name == "" {
		m.Name = "calibrated"
	}
	m.ThreadsPerRank = o.Threads
	m.Device = dev.Name()
	if err := m.Validate(); err != nil {
		// A device whose Name is not one of Devices would write a
		// profile that does not load back.
		return nil, fmt.Errorf("perfmodel: calibrating on device %q: %w", dev.Name(), err)
	}
	m.Fit = map[string]float64{}

	nodes, perNode, contiguous, err := c.nodes()
	if err != nil {
		return nil, err
	}
	m.RanksPerNode = perNode
	if m.SpMM, err = c.spmm(c.dev, "", m.Fit); err != nil {
		return nil, err
	}
	if m.GEMM, err = c.gemm(c.dev, "", m.Fit); err != nil {
		return nil, err
	}
	// The same shapes in mixed precision, through the wrapper every
	// method's products go through (train.precision = "bf16").
	var bf Products
	if bf.SpMM, err = c.spmm(device.BF16Products(c.dev), "bf16_", m.Fit); err != nil {
		return nil, err
	}
	if bf.GEMM, err = c.gemm(device.BF16Products(c.dev), "bf16_", m.Fit); err != nil {
		return nil, err
	}
	m.BF16 = bf
	if err := c.elementwise(m); err != nil {
		return nil, err
	}
	if err := c.disk(m); err != nil {
		return nil, err
	}
	if world.Size() > 1 {
		if err := c.comm(m, nodes, perNode, contiguous); err != nil {
			return nil, err
		}
	}
	host, _ := os.Hostname()
	m.Description = fmt.Sprintf("calibrated with %d ranks on %d node(s) (%d per node), %d kernel threads per rank, device %s, on %s, %s; took %.1f s",
		world.Size(), nodes, perNode, o.Threads, dev.Name(), host, time.Now().UTC().Format("2006-01-02"), time.Since(start).Seconds())
	if nodes == 1 {
		m.Description += "; single node: comm.inter keeps the built-in defaults"
	}
	return m, nil
}

type calibrator struct {
	world collectives.Comm
	dev   device.Device
	o     CalibrateOptions
	log   io.Writer
	reps  int
}

// minMeasure is the least time one measurement runs: short operations are
// repeated until they last this long, so that ranks sharing cores are
// measured sharing them (a kernel shorter than a scheduler time slice runs
// alone on its core and looks faster than it is in a training step).
const minMeasure = 0.02

// sync waits for a device that queues its work (a GPU), so that a
// timing covers the work and not only its launch.
func (c *calibrator) sync() {
	if s, ok := c.dev.(interface{ Sync() }); ok {
		s.Sync()
	}
}

// timeIt runs f once to warm up, then reps times a batch of k calls (k
// agreed over the ranks so that every batch lasts about minMeasure), and
// returns the maximum over ranks of each rank's median time per call.
func (c *calibrator) timeIt(f func() error) (float64, error) {
	if err := c.world.Barrier(); err != nil {
		return 0, err
	}
	t0 := time.Now()
	if err := f(); err != nil {
		return 0, err
	}
	c.sync()
	warm := []float64{time.Since(t0).Seconds()}
	if err := c.world.AllReduceF64(warm, collectives.Max); err != nil {
		return 0, err
	}
	k := int(math.Min(1000, math.Ceil(minMeasure/math.Max(warm[0], 1e-7))))
	if c.o.Quick {
		k = min(k, 10)
	}
	ts := make([]float64, c.reps)
	for i := range ts {
		if err := c.world.Barrier(); err != nil {
			return 0, err
		}
		t0 := time.Now()
		for range k {
			if err := f(); err != nil {
				return 0, err
			}
		}
		c.sync()
		ts[i] = time.Since(t0).Seconds() / float64(k)
	}
	sort.Float64s(ts)
	v := []float64{ts[len(ts)/2]}
	if err := c.world.AllReduceF64(v, collectives.Max); err != nil {
		return 0, err
	}
	return math.Max(v[0], 1e-9), nil
}

// nodes finds which ranks share a node (by host name): the node count, the
// ranks on rank 0's node, and whether nodes hold consecutive ranks.
func (c *calibrator) nodes() (nodes, perNode int, contiguous bool, err error) {
	host, _ := os.Hostname()
	h := fnv.New64a()
	h.Write([]byte(host))
	ids := make([]int64, c.world.Size())
	ids[c.world.Rank()] = int64(h.Sum64() >> 2)
	if err := c.world.AllReduceI64(ids, collectives.Sum); err != nil {
		return 0, 0, false, err
	}
	seen := map[int64]bool{}
	contiguous = true
	for r, id := range ids {
		if !seen[id] {
			seen[id] = true
		} else if ids[r-1] != id {
			contiguous = false
		}
		if id == ids[0] {
			perNode++
		}
	}
	return len(seen), perNode, contiguous, nil
}

func randomCSR(rng *rand.Rand, rows, cols, perRow int) *spmm.CSR {
	ri := make([]int32, 0, rows*perRow)
	ci := make([]int32, 0, rows*perRow)
	for r := 0; r < rows; r++ {
		for k := 0; k < perRow; k++ {
			ri = append(ri, int32(r))
			ci = append(ci, int32(rng.IntN(cols)))
		}
	}
	vals := make([]float32, len(ri))
	for i := range vals {
		vals[i] = 1
	}
	return spmm.FromCOO(rows, cols, ri, ci, vals)
}

func filled(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i%7) - 3
	}
	return v
}

// mat returns a rows×cols matrix on the device, filled (an operand) or
// zero (an output).
func (c *calibrator) mat(rows, cols int, fill bool) device.Mat {
	buf := device.Alloc[float32](c.dev, rows*cols)
	if fill {
		device.Upload(c.dev, buf, 0, filled(rows*cols))
	}
	return device.Matrix(buf, rows, cols)
}

// spmm measures dev's SpMM on random matrices of several shapes and
// widths and fits the linear form; its fit statistics go into fit under
// prefix ("" or "bf16_").
func (c *calibrator) spmm(dev device.Device, prefix string, fit map[string]float64) (SpMMCost, error) {
	type shape struct {
		rows, inner, perRow int
		widths              []int
	}
	shapes := []shape{
		{8192, 8192, 8, []int{1, 4, 16, 64, 128}},
		{65536, 65536, 8, []int{1, 4, 16, 64}},
		{262144, 262144, 4, []int{1, 4, 16}},
		{16384, 262144, 16, []int{2, 8, 32}},
		{262144, 16384, 2, []int{8, 32}},
		{131072, 131072, 8, []int{8, 32}},
	}
	if c.o.Quick {
		shapes = []shape{{8192, 8192, 8, []int{1, 16, 128}}, {65536, 65536, 4, []int{1, 8, 32}}, {131072, 8192, 2, []int{4, 16}}}
	}
	rng := rand.New(rand.NewPCG(1, uint64(c.world.Rank())))
	type point struct {
		nnz                float64
		rows, inner, width int
		t                  float64
	}
	var points []point
	for _, s := range shapes {
		a := randomCSR(rng, s.rows, s.inner, s.perRow)
		da := dev.UploadCSR(a)
		for _, w := range s.widths {
			b, dst := c.mat(s.inner, w, true), c.mat(s.rows, w, false)
			t, err := c.timeIt(func() error { dev.SpMM(dst, da, b); return nil })
			if err != nil {
				return SpMMCost{}, err
			}
			points = append(points, point{float64(a.NNZ()), s.rows, s.inner, w, t})
			fmt.Fprintf(c.log, "%sspmm rows=%d inner=%d nnz=%d width=%d: %.3g s\n", prefix, s.rows, s.inner, a.NNZ(), w, t)
		}
	}
	// The cache size is not linear in the model: try a range and keep the
	// best fit.
	var f FitResult
	var cache float64
	for _, cb := range []float64{0, 1 << 17, 1 << 18, 1 << 19, 1 << 20, 1 << 21, 1 << 22, 1 << 23, 1 << 24, 1 << 25} {
		var samples []Sample
		for _, p := range points {
			fw := float64(p.width)
			samples = append(samples, Sample{X: []float64{1, p.nnz, p.nnz * fw, float64(p.rows) * fw, float64(p.inner) * fw,
				missLines(p.nnz, p.inner, p.width, cb)}, T: p.t})
		}
		fc, err := FitNonNegative(samples)
		if err != nil {
			return SpMMCost{}, fmt.Errorf("fitting the %sSpMM model: %w", prefix, err)
		}
		if f.Coef == nil || fc.R2 > f.R2 {
			f, cache = fc, cb
		}
	}
	fit[prefix+"spmm_r2"], fit[prefix+"spmm_median_rel_err"], fit[prefix+"spmm_samples"] = f.R2, f.MedianRelErr, float64(len(points))
	return SpMMCost{Form: SpMMLinear, Call: f.Coef[0], NNZ: f.Coef[1], FMA: f.Coef[2], Out: f.Coef[3], In: f.Coef[4], Miss: f.Coef[5], Cache: cache}, nil
}

// gemm measures dev's GEMM in the three forms a step runs and fits each;
// its fit statistics go into fit under prefix.
func (c *calibrator) gemm(dev device.Device, prefix string, fit map[string]float64) (GEMMCosts, error) {
	var costs GEMMCosts
	bigs := []int{4096, 32768, 131072}
	smalls := [][2]int{{2, 2}, {8, 8}, {16, 64}, {64, 16}, {32, 32}, {64, 64}, {128, 128}, {128, 8}, {8, 128}}
	if c.o.Quick {
		bigs = []int{4096, 65536}
		smalls = [][2]int{{4, 4}, {32, 32}, {128, 128}, {128, 8}}
	}
	const maxFMA = 64 << 20
	for _, op := range []string{"nn", "tn", "nt"} {
		var samples []Sample
		for _, big := range bigs {
			for _, sm := range smalls {
				if big*sm[0]*sm[1] > maxFMA {
					continue
				}
				var mm, nn, kk int
				var ta, tb spmm.Op = spmm.NoTrans, spmm.NoTrans
				var a, b device.Mat
				switch op {
				case "nn": // H·W: (big × a)·(a × b)
					mm, kk, nn = big, sm[0], sm[1]
					a, b = c.mat(mm, kk, true), c.mat(kk, nn, true)
				case "tn": // Hᵀ·dZ: (big × a)ᵀ·(big × b)
					mm, kk, nn = sm[0], big, sm[1]
					ta = spmm.Trans
					a, b = c.mat(kk, mm, true), c.mat(kk, nn, true)
				case "nt": // dZ·Wᵀ: (big × b)·(a × b)ᵀ
					mm, kk, nn = big, sm[1], sm[0]
					tb = spmm.Trans
					a, b = c.mat(mm, kk, true), c.mat(nn, kk, true)
				}
				dst := c.mat(mm, nn, false)
				t, err := c.timeIt(func() error { dev.Gemm(ta, tb, 1, a, b, 0, dst); return nil })
				if err != nil {
					return GEMMCosts{}, err
				}
				fm, fn, fk := float64(mm), float64(nn), float64(kk)
				samples = append(samples, Sample{X: []float64{1, fm * fn * fk, fm*fk + fk*fn + fm*fn}, T: t})
				fmt.Fprintf(c.log, "%sgemm %s m=%d n=%d k=%d: %.3g s\n", prefix, op, mm, nn, kk, t)
			}
		}
		f, err := FitNonNegative(samples)
		if err != nil {
			return GEMMCosts{}, fmt.Errorf("fitting the %sGEMM %s model: %w", prefix, op, err)
		}
		g := GEMMCost{Call: f.Coef[0], FMA: f.Coef[1], Elem: f.Coef[2]}
		switch op {
		case "nn":
			costs.NN = g
		case "tn":
			costs.TN = g
		case "nt":
			costs.NT = g
		}
		fit[prefix+"gemm_"+op+"_r2"], fit[prefix+"gemm_"+op+"_median_rel_err"] = f.R2, f.MedianRelErr
	}
	return costs, nil
}

// elementwise times the element-wise ops gcn issues in a step — dropout
// with its mask recorded, the in-place ReLU, the ReLU's gradient, the
// residual add and the dropout mask's application — and fits one cost per
// float32 element read or written, the unit in which the tracer counts
// every element-wise pass (a fused op counts its streams once).
func (c *calibrator) elementwise(m *Machine) error {
	var samples []Sample
	const cols = 128
	for _, n := range []int{1 << 18, 1 << 21} {
		rows := n / cols
		src, other, out := c.mat(rows, cols, true), c.mat(rows, cols, true), c.mat(rows, cols, false)
		keep := device.Alloc[uint64](c.dev, rows*(cols/64))
		verts := make([]int32, rows)
		for i := range verts {
			verts[i] = int32(i)
		}
		spec := device.Dropout{Seed: 1, P: 0.5, Verts: device.Share(c.dev, verts)}
		// The element-wise ops a training step issues (gcn's forward and
		// backward), each with the float32 streams it reads and writes —
		// the unit of the tracer's element counts (plan.go).
		for _, op := range []struct {
			name    string
			streams int
			run     func()
		}{
			{"dropout", 2, func() { c.dev.DropoutRecord(out, src, keep, spec) }},
			{"relu", 2, func() { c.dev.ReLU(out, out) }},
			{"relu.backward", 3, func() { c.dev.ReLUBackward(out, src, other) }},
			{"add", 3, func() { c.dev.Add(out, src, other) }},
			{"mask", 2, func() { c.dev.ApplyMask(out, src, keep, 0.5) }},
		} {
			t, err := c.timeIt(func() error { op.run(); return nil })
			if err != nil {
				return err
			}
			samples = append(samples, Sample{X: []float64{float64(op.streams * n)}, T: t})
			fmt.Fprintf(c.log, "elementwise %s n=%d: %.3g s\n", op.name, n, t)
		}
	}
	f, err := FitNonNegative(samples)
	if err != nil {
		return fmt.Errorf("fitting the element-wise model: %w", err)
	}
	m.Elementwise.Elem = f.Coef[0]
	return nil
}

// comm measures all-reduce and all-gather on groups of every size that
// divides the ranks of a node (consecutive ranks, like the Y groups), all
// groups at once, and the all-reduce above largeAllReduceFrom apart
// (calibrator.large); with several nodes also on groups of one rank per
// node (every group leaves the node at once, so the node's bandwidth is
// the fitted one times the ranks per node).
func (c *calibrator) comm(m *Machine, nodes, perNode int, contiguous bool) error {
	sizes := []int{1 << 12, 1 << 16, 1 << 20, 1 << 23}
	if c.o.Quick {
		sizes = []int{1 << 12, 1 << 18, 1 << 22}
	}
	fitLink := func(name string, color func(r int) int, groupSizes []int) (Link, error) {
		var samples []Sample
		for _, p := range groupSizes {
			sub, err := c.world.Split(color(p), c.world.Rank())
			if err != nil {
				return Link{}, err
			}
			if sub.Size() != p {
				return Link{}, fmt.Errorf("calibration: group of %d ranks, want %d", sub.Size(), p)
			}
			steps := math.Ceil(math.Log2(float64(p)))
			for _, bytes := range sizes {
				n := bytes / 4
				buf := filled(n)
				t, err := c.timeIt(func() error { return sub.AllReduceF32(buf, collectives.Sum) })
				if err != nil {
					return Link{}, err
				}
				fp := float64(p)
				samples = append(samples, Sample{X: []float64{2 * steps, 2 * (fp - 1) / fp * float64(bytes)}, T: t})
				fmt.Fprintf(c.log, "%s allreduce p=%d bytes=%d: %.3g s\n", name, p, bytes, t)
				src := filled(max(1, n/p))
				dst := make([]float32, len(src)*p)
				t, err = c.timeIt(func() error { return sub.AllGatherF32(dst, src) })
				if err != nil {
					return Link{}, err
				}
				samples = append(samples, Sample{X: []float64{steps, (fp - 1) * 4 * float64(len(src))}, T: t})
				fmt.Fprintf(c.log, "%s allgather p=%d bytes=%d: %.3g s\n", name, p, 4*len(src)*p, t)
			}
		}
		f, err := FitNonNegative(samples)
		if err != nil {
			return Link{}, fmt.Errorf("fitting the %s link: %w", name, err)
		}
		m.Fit["comm_"+name+"_r2"], m.Fit["comm_"+name+"_median_rel_err"] = f.R2, f.MedianRelErr
		if f.Coef[1] <= 0 {
			return Link{}, fmt.Errorf("calibration: the %s bandwidth term fitted to zero; measurements too noisy", name)
		}
		return Link{Latency: f.Coef[0], Bandwidth: 1 / f.Coef[1] / 1e9}, nil
	}
	rank := c.world.Rank()
	var intraSizes []int
	for _, p := range divisors(perNode) {
		if p > 1 && (nodes == 1 || contiguous) {
			intraSizes = append(intraSizes, p)
		}
	}
	if len(intraSizes) > 0 {
		l, err := fitLink("intra", func(p int) int { return rank / p }, intraSizes)
		if err != nil {
			return err
		}
		m.Comm.Intra = l
		// The broadcast's own fit (Machine.Comm.Bcast), measured as 1.5D's
		// stages make broadcasts (calibrate_bcast.go).
		if err := c.stagedBcast(m, func(p int) int { return rank / p }, intraSizes); err != nil {
			return err
		}
		// All-reduces from 32 MiB on map their temporary buffer afresh
		// (Link.Large): timed apart, since the link's fit stays below.
		if err := c.large(m, &m.Comm.Intra, "intra", func(p int) int { return rank / p }, intraSizes); err != nil {
			return err
		}
	}
	if nodes > 1 && contiguous && c.world.Size() == nodes*perNode {
		l, err := fitLink("inter", func(p int) int { return rank % perNode }, []int{nodes})
		if err != nil {
			return err
		}
		l.Bandwidth *= float64(perNode)
		// The fresh buffer of a large all-reduce is the rank's own host
		// memory, whichever link the message takes: the intra-node
		// measurement stands for both.
		l.LargeFrom, l.Large = m.Comm.Intra.LargeFrom, m.Comm.Intra.Large
		m.Comm.Inter = l
	}
	return nil
}
