//go:build cgo

package device

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unsafe"

	"scalegnn/device/internal/cuda"
	"scalegnn/spmm"
)

// TestCUDAGATEmulated runs the CUDA device's GAT operations without a
// GPU: the device's methods (argument checks, launch geometry, kernel
// arguments) on buffers in a host arena, their launches recorded and then
// run by cuda_kernels.cu compiled with g++ for the host, block by block
// and thread by thread (the GAT kernels share nothing between threads,
// so that order is as good as the GPU's). The results must be Native's
// bit for bit, except where exp or expm1 enter (the C library's, not
// Go's: within a float32 ulp) and HeadDotGrad (summed in chunks of rows).
func TestCUDAGATEmulated(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++")
	}
	dir := t.TempDir()
	emu := buildEmulator(t, gxx, dir)
	for n, c := range []struct{ rows, cols, maxDeg, heads, f, pad int }{
		{1, 1, 1, 1, 1, 0},
		{7, 5, 4, 2, 3, 1},
		{40, 33, 9, 8, 1, 2},
		{300, 280, 40, 3, 5, 1}, // HeadDotGrad over two chunks
		{70, 64, 12, 1, 33, 0},  // SpMMHeads with more columns than a warp
		{520, 40, 4, 1, 64, 3},  // one head as wide as a layer, as the bias uses HeadDot*, over chunks of rows
	} {
		for _, p := range []float64{0, 0.3} {
			t.Run(fmt.Sprintf("%dx%d K=%d F'=%d p=%g", c.rows, c.cols, c.heads, c.f, p), func(t *testing.T) {
				emulateGATCase(t, emu, dir, uint64(n), c.rows, c.cols, c.maxDeg, c.heads, c.f, c.pad, p)
			})
		}
	}
}

// emuDevice is a CUDA device without a GPU: buffers in arena, launches
// recorded.
type emuDevice struct {
	d        *CUDA
	arena    []byte
	launches []emuLaunch
}

type emuLaunch struct {
	k              kern
	gx, gy, bx, by uint32
	args           []uint64
}

// emuBase keeps every fake address non-zero (0 is the kernels' null).
const emuBase = 256

func newEmu() *emuDevice {
	e := &emuDevice{d: &CUDA{gatRowThreads: true}, arena: make([]byte, emuBase)}
	e.d.launchHook = func(k kern, gx, gy, bx, by uint32, args [cuda.MaxArgs]uint64, n int) {
		e.launches = append(e.launches, emuLaunch{k, gx, gy, bx, by, append([]uint64(nil), args[:n]...)})
	}
	return e
}

func emuAlloc[T Elem](e *emuDevice, v []T) Buffer[T] {
	for len(e.arena)%256 != 0 {
		e.arena = append(e.arena, 0)
	}
	off := len(e.arena)
	n := int64(len(v)) * elemSize[T]()
	e.arena = append(e.arena, make([]byte, n)...)
	if n > 0 {
		copy(e.arena[off:], unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), n))
	}
	return Buffer[T]{blk: &gpuBlock{ptr: uintptr(off), bytes: n}, n: len(v)}
}

func emuRead[T Elem](e *emuDevice, b Buffer[T]) []T {
	out := make([]T, b.Len())
	if len(out) > 0 {
		n := int64(len(out)) * elemSize[T]()
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), n), e.arena[b.addr(0):int64(b.addr(0))+n])
	}
	return out
}

// emuMat is a strided rows×cols view with pad elements after each row.
func emuMat(e *emuDevice, host Device, v []float32, rows, cols, pad int) (Mat, Mat) {
	whole := make([]float32, rows*(cols+pad)+1)
	for i := range rows {
		copy(whole[i*(cols+pad):], v[i*cols:(i+1)*cols])
	}
	hb := Alloc[float32](host, len(whole))
	Upload(host, hb, 0, whole)
	return MatrixStride(emuAlloc(e, whole), rows, cols, cols+pad), MatrixStride(hb, rows, cols, cols+pad)
}

func emuMatRead(e *emuDevice, m Mat) []float32 {
	all := emuRead(e, m.buf)
	out := make([]float32, 0, m.rows*m.cols)
	for i := range m.rows {
		out = append(out, all[m.off+i*m.strid:m.off+i*m.strid+m.cols]...)
	}
	return out
}

func hostMatRead(m Mat) []float32 {
	out := make([]float32, 0, m.rows*m.cols)
	for i := range m.rows {
		out = append(out, m.row(i)...)
	}
	return out
}

func emuCSR(e *emuDevice, a *spmm.CSR) *CSR {
	rp := make([]int32, len(a.RowPtr))
	for i, p := range a.RowPtr {
		rp[i] = int32(p)
	}
	return &CSR{g: &gpuCSR{rows: a.Rows, cols: a.Cols, nnz: int(a.NNZ()), rowPtr: emuAlloc(e, rp), colIdx: emuAlloc(e, a.ColIdx),
		val: emuAlloc(e, a.Val)}}
}

// run writes the arena and the launches, runs the emulator and reads the
// arena back.
func (e *emuDevice) run(t *testing.T, emu, dir string) {
	var in bytes.Buffer
	w := func(v any) { binary.Write(&in, binary.LittleEndian, v) }
	w(uint64(len(e.arena)))
	in.Write(e.arena)
	w(uint64(len(e.launches)))
	for _, l := range e.launches {
		w([6]uint32{uint32(l.k), l.gx, l.gy, l.bx, l.by, uint32(len(l.args))})
		w(l.args)
	}
	path := filepath.Join(dir, "launches.bin")
	if err := os.WriteFile(path, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(emu, path)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("emulator: %v\n%s", err, stderr.String())
	}
	if out.Len() != len(e.arena) {
		t.Fatalf("emulator returned %d bytes of arena, want %d", out.Len(), len(e.arena))
	}
	copy(e.arena, out.Bytes())
	e.launches = e.launches[:0]
}

// buildEmulator compiles the kernels with stand-ins for CUDA's built-ins
// and a main that runs recorded launches (emuDevice.run's format), each
// kernel called through a thunk generated from its parameter list.
func buildEmulator(t *testing.T, gxx, dir string) string {
	var src strings.Builder
	src.WriteString(`#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#define __global__
#define __device__
#define __forceinline__ inline
#define __shared__ static
struct dim3_ { unsigned x, y, z; };
dim3_ threadIdx, blockIdx, blockDim, gridDim;
unsigned __ballot_sync(unsigned, bool) { abort(); }
float __shfl_xor_sync(unsigned, float, int) { abort(); } // warp kernels: gatRowThreads keeps them out
void __syncthreads() { abort(); }
unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) { unsigned long long o = *p; *p += v; return o; }
float __int_as_float(int v) { float f; memcpy(&f, &v, 4); return f; }
float __uint_as_float(unsigned v) { float f; memcpy(&f, &v, 4); return f; }
unsigned __float_as_uint(float f) { unsigned v; memcpy(&v, &f, 4); return v; }
static unsigned char *arena;
`)
	src.WriteString(kernelSource)
	src.WriteString("\nstatic float f32(unsigned long long s) { return __uint_as_float((unsigned)s); }\n")
	src.WriteString("static double f64(unsigned long long s) { double d; memcpy(&d, &s, 8); return d; }\n")
	sig := regexp.MustCompile(`extern "C" __global__ void (k_\w+)\(([^)]*)\)`)
	thunks := map[string]string{}
	for _, m := range sig.FindAllStringSubmatch(kernelSource, -1) {
		var args []string
		for i, p := range strings.Split(m[2], ",") {
			p = strings.Join(strings.Fields(p), " ")
			typ := p[:strings.LastIndexAny(p, " *")+1]
			slot := fmt.Sprintf("a[%d]", i)
			switch {
			case strings.Contains(typ, "*"):
				args = append(args, fmt.Sprintf("(%s)(%s ? arena + %s : 0)", typ, slot, slot))
			case strings.TrimSpace(typ) == "float":
				args = append(args, "f32("+slot+")")
			case strings.TrimSpace(typ) == "double":
				args = append(args, "f64("+slot+")")
			default:
				args = append(args, fmt.Sprintf("(%s)%s", typ, slot))
			}
		}
		thunks[m[1]] = fmt.Sprintf("%s(%s);", m[1], strings.Join(args, ", "))
	}
	src.WriteString("static void call(int k, const unsigned long long *a) {\n\tswitch (k) {\n")
	for k, name := range kernelNames {
		if thunks[name] == "" {
			t.Fatalf("no signature found for %s", name)
		}
		fmt.Fprintf(&src, "\tcase %d: %s break;\n", k, thunks[name])
	}
	src.WriteString(`	default: abort();
	}
}
static void get(void *p, size_t n, FILE *f) { if (fread(p, 1, n, f) != n) { fprintf(stderr, "short input\n"); exit(1); } }
int main(int argc, char **argv) {
	FILE *f = fopen(argv[1], "rb");
	unsigned long long size, n;
	get(&size, 8, f);
	arena = (unsigned char *)malloc(size);
	get(arena, size, f);
	get(&n, 8, f);
	for (unsigned long long l = 0; l < n; l++) {
		unsigned h[6];
		get(h, sizeof h, f);
		std::vector<unsigned long long> a(h[5] + 1);
		get(a.data(), 8 * h[5], f);
		gridDim = {h[1], h[2], 1};
		blockDim = {h[3], h[4], 1};
		for (unsigned by = 0; by < h[2]; by++)
			for (unsigned bx = 0; bx < h[1]; bx++)
				for (unsigned ty = 0; ty < h[4]; ty++)
					for (unsigned tx = 0; tx < h[3]; tx++) {
						blockIdx = {bx, by, 0};
						threadIdx = {tx, ty, 0};
						call((int)h[0], a.data());
					}
	}
	fwrite(arena, 1, size, stdout);
	return 0;
}
`)
	cpp, bin := filepath.Join(dir, "emu.cpp"), filepath.Join(dir, "emu")
	if err := os.WriteFile(cpp, []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// No contraction into fused multiply-adds, as NVRTC's --fmad=false.
	if out, err := exec.Command(gxx, "-std=c++17", "-O1", "-ffp-contract=off", "-w", "-o", bin, cpp).CombinedOutput(); err != nil {
		t.Fatalf("g++ cannot build the kernel emulator: %v\n%s", err, out)
	}
	return bin
}

func emulateGATCase(t *testing.T, emu, dir string, seed uint64, rows, cols, maxDeg, K, F, pad int, p float64) {
	r := rand.New(rand.NewPCG(seed, 26))
	W := K * F
	rnd := func(n int) []float32 {
		v := make([]float32, n)
		for k := range v {
			v[k] = float32(r.NormFloat64())
			if r.IntN(10) == 0 {
				v[k] = 0
			}
		}
		return v
	}
	verts := func(n int) []int32 {
		v := make([]int32, n)
		for k := range v {
			v[k] = r.Int32N(1 << 20)
		}
		return v
	}
	a := &spmm.CSR{Rows: rows, Cols: cols, RowPtr: make([]int64, rows+1)}
	for i := range rows {
		deg := min(r.IntN(maxDeg+1), cols)
		if i%4 == 0 {
			deg = 0
		}
		for _, j := range r.Perm(cols)[:deg] {
			a.ColIdx = append(a.ColIdx, int32(j))
			a.Val = append(a.Val, 1)
		}
		a.RowPtr[i+1] = int64(len(a.ColIdx))
	}
	at, perm := spmm.TransposePerm(a)
	nnz := int(a.NNZ())
	host := NewNative(1)
	e := newEmu()
	ha, hat := host.UploadCSR(a), host.UploadCSR(at)
	ea, eat := emuCSR(e, a), emuCSR(e, at)
	rv, cv := verts(rows), verts(cols)
	g := GAT{Heads: K, Slope: 0.2, Seed: 9, Step: 3, Site: 4, P: p}
	hg, eg := g, g
	if p > 0 {
		hg.RowVerts, hg.ColVerts = Share(host, rv), Share(host, cv)
		eg.RowVerts, eg.ColVerts = emuAlloc(e, rv), emuAlloc(e, cv)
	}
	type pair struct {
		name string
		h    Buffer[float32]
		e    Buffer[float32]
		ulp  int     // exp enters: within ulp float32 ulps
		rtol float64 // summed in another order: within rtol
	}
	type mpair struct {
		name string
		h, e Mat
		ulp  int
	}
	var outs []pair
	var mouts []mpair
	vec := func(name string, v []float32, ulp int) (Buffer[float32], Buffer[float32]) {
		hb := Share(host, append([]float32(nil), v...))
		eb := emuAlloc(e, v)
		if name != "" {
			outs = append(outs, pair{name: name, h: hb, e: eb, ulp: ulp})
		}
		return hb, eb
	}
	mat := func(name string, rows, cols int, ulp int) (Mat, Mat) {
		em, hm := emuMat(e, host, rnd(rows*cols), rows, cols, pad)
		if name != "" {
			mouts = append(mouts, mpair{name, hm, em, ulp})
		}
		return hm, em
	}
	none := Buffer[int32]{}
	hperm, eperm := Share(host, perm), emuAlloc(e, perm)

	// The forward chain, each step's output the next one's input.
	hyr, eyr := mat("", rows, W, 0)
	hyc, eyc := mat("", cols, W, 0)
	hatt, eatt := vec("", rnd(W), 0)
	hs, es := vec("HeadDot s", rnd(rows*K), 0)
	ht, et := vec("HeadDot t", rnd(cols*K), 0)
	host.HeadDot(hs, hyr, hatt, K)
	e.d.HeadDot(es, eyr, eatt, K)
	host.HeadDot(ht, hyc, hatt, K)
	e.d.HeadDot(et, eyc, eatt, K)
	hsc, esc := vec("GATExpSum e", rnd(nnz*K), 1)
	hmx, emx := vec("GATScores mx", rnd(rows*K), 0)
	hsum, esum := vec("GATExpSum sums", rnd(rows*K), 1)
	host.GATScores(hsc, hmx, ha, hs, ht, hg)
	e.d.GATScores(esc, emx, ea, es, et, eg)
	host.GATExpSum(hsc, hsum, ha, hmx, hg)
	e.d.GATExpSum(esc, esum, ea, emx, eg)
	halpha, ealpha := vec("GATNormalize alpha", rnd(nnz*K), 1)
	hdrop, edrop := vec("GATNormalize drop", rnd(nnz*K), 1)
	host.GATNormalize(halpha, hdrop, ha, hsc, hsum, hg)
	e.d.GATNormalize(ealpha, edrop, ea, esc, esum, eg)
	host.GATNormalize(hsc, hdrop, ha, hsc, hsum, hg) // alpha == e
	e.d.GATNormalize(esc, edrop, ea, esc, esum, eg)
	hb, eb := mat("", cols, W, 0)
	hout, eout := mat("SpMMHeads", rows, W, 1)
	host.SpMMHeads(hout, ha, hdrop, none, hb, K)
	e.d.SpMMHeads(eout, ea, edrop, none, eb, K)
	hb2, eb2 := mat("", rows, W, 0)
	houtT, eoutT := mat("SpMMHeads transposed", cols, W, 1)
	host.SpMMHeads(houtT, hat, hdrop, hperm, hb2, K)
	e.d.SpMMHeads(eoutT, eat, edrop, eperm, eb2, K)

	// The backward chain on fresh inputs.
	hx, ex := mat("", rows, W, 0)
	hda, eda := vec("GATLogitGrad dz == dalpha", rnd(nnz*K), 0)
	host.SDDMMHeads(hda, ha, hx, hyc, K)
	e.d.SDDMMHeads(eda, ea, ex, eyc, K)
	hsd, esd := vec("SDDMMHeads", rnd(nnz*K), 0)
	host.SDDMMHeads(hsd, ha, hx, hyc, K)
	e.d.SDDMMHeads(esd, ea, ex, eyc, K)
	hr, er := vec("GATRowDot r", rnd(rows*K), 0)
	hal, eal := vec("", rnd(nnz*K), 0)
	host.GATRowDot(hr, hda, ha, hal, hg)
	e.d.GATRowDot(er, eda, ea, eal, eg)
	hdz, edz := vec("GATLogitGrad dz", rnd(nnz*K), 0)
	hds, eds := vec("GATLogitGrad ds", rnd(rows*K), 0)
	host.GATLogitGrad(hdz, hds, ha, hal, hda, hr, hs, ht, hg)
	e.d.GATLogitGrad(edz, eds, ea, eal, eda, er, es, et, eg)
	host.GATLogitGrad(hda, hds, ha, hal, hda, hr, hs, ht, hg)
	e.d.GATLogitGrad(eda, eds, ea, eal, eda, er, es, et, eg)
	hes, ees := vec("EdgeSums", rnd(rows*K), 0)
	host.EdgeSums(hes, ha, hdz, none, K)
	e.d.EdgeSums(ees, ea, edz, none, K)
	hesT, eesT := vec("EdgeSums transposed", rnd(cols*K), 0)
	host.EdgeSums(hesT, hat, hdz, hperm, K)
	e.d.EdgeSums(eesT, eat, edz, eperm, K)
	hdy, edy := mat("HeadDotBackward", rows, W, 0)
	host.HeadDotBackward(hdy, hds, hatt, K)
	e.d.HeadDotBackward(edy, eds, eatt, K)
	hdatt, edatt := vec("", rnd(W), 0)
	outs = append(outs, pair{name: "HeadDotGrad", h: hdatt, e: edatt, rtol: 1e-5})
	e.d.gatPart = emuAlloc(e, make([]float32, ceilDiv(rows, gatChunk)*W))
	host.HeadDotGrad(hdatt, hds, hyr, K)
	e.d.HeadDotGrad(edatt, eds, eyr, K)

	// ELU, in place too, and the head mean.
	hz, ez := mat("", rows, W, 0)
	hel, eel := mat("ELU", rows, W, 1)
	host.ELU(hel, hz)
	e.d.ELU(eel, ez)
	hg2, eg2 := mat("ELUBackward", rows, W, 1)
	host.ELUBackward(hg2, hg2, hel)
	e.d.ELUBackward(eg2, eg2, eel)
	mouts = append(mouts, mpair{"ELU in place", hz, ez, 1})
	host.ELU(hz, hz)
	e.d.ELU(ez, ez)
	hm, em := mat("HeadMean", rows, F, 0)
	host.HeadMean(hm, hyr, K)
	e.d.HeadMean(em, eyr, K)
	hmb, emb := mat("HeadMeanBackward", rows, W, 0)
	host.HeadMeanBackward(hmb, hm, K)
	e.d.HeadMeanBackward(emb, em, K)

	e.run(t, emu, dir)
	for _, o := range outs {
		got, want := emuRead(e, o.e), o.h.host
		if o.rtol > 0 {
			w := make([]float64, len(want))
			for k, v := range want {
				w[k] = float64(v)
			}
			checkNear(t, o.name, got, w, o.rtol)
			continue
		}
		checkULP(t, o.name, got, want, o.ulp)
	}
	for _, o := range mouts {
		checkULP(t, o.name, emuMatRead(e, o.e), hostMatRead(o.h), o.ulp)
	}
	// Nothing outside the strided views was written: the padding is 0.
	for _, o := range mouts {
		all := emuRead(e, o.e.buf)
		for i := range all {
			k := i - o.e.off
			if k < 0 || k/o.e.strid >= o.e.rows || k%o.e.strid >= o.e.cols {
				if all[i] != 0 {
					t.Fatalf("%s: element %d outside the view was written", o.name, i)
				}
			}
		}
	}
}

func checkULP(t *testing.T, name string, got, want []float32, ulp int) {
	t.Helper()
	bad := 0
	for k := range want {
		g, w := got[k], want[k]
		if math.Float32bits(g) == math.Float32bits(w) {
			continue
		}
		d := int64(emuOrdered(g)) - int64(emuOrdered(w))
		if g != g || w != w || d > int64(ulp) || d < -int64(ulp) {
			if bad++; bad <= 5 {
				t.Errorf("%s: element %d = %g, Native %g (within %d ulp)", name, k, g, w, ulp)
			}
		}
	}
}

func checkNear(t *testing.T, name string, got []float32, want []float64, rtol float64) {
	t.Helper()
	for k := range want {
		if math.Abs(float64(got[k])-want[k]) > rtol*(math.Abs(want[k])+1e-3) {
			t.Errorf("%s: element %d = %g, Native %g", name, k, got[k], want[k])
			return
		}
	}
}

func emuOrdered(f float32) int32 {
	b := int32(math.Float32bits(f))
	if b < 0 {
		b = math.MinInt32 - b
	}
	return b
}
