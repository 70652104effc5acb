package gcn

import (
	"fmt"
	"math"

	"scalegnn/spmm"
)

// Reference is the serial float64 model: the ground truth every distributed
// run is tested against. It is deliberately plain — dense row-major
// matrices, loops, no parallelism — and shares with the distributed model
// only the definitions of the random draws and of the optimizer update.
type Reference struct {
	Cfg    Config
	Opt    Optimizer
	adj    *spmm.CSR // Â (GCN; GAT reads its pattern) or D^-1 A (SAGE), in float32 storage, used in float64
	x      []float64 // N×Features
	labels []int32
	train  []bool
	n      int

	Params []*RefParam
	t      int // optimizer steps taken

	// Verts, when set, are the vertex ids of the rows (dropout masks are
	// keyed by vertex id); a mini-batch's reference sets them, the full
	// graph's rows are the vertices 0, 1, ...
	Verts []int32

	// BF16 is train.precision = "bf16" (device.BF16Products): every
	// product reads its dense operands rounded to bfloat16, through
	// float32 (spmm.RoundBF16 of the float32 value), and sums in float64;
	// the sparse operand's values stay as they are. The roundings are at
	// the same places as the distributed model's: the SpMMs' dense
	// operand, both operands of every GEMM (weights included), nothing
	// else. GAT's attention aggregation is not a product here or there.
	BF16 bool
}

// bf returns x as a product reads it: rounded to bfloat16 with BF16 set
// (a copy), x itself otherwise.
func (r *Reference) bf(x []float64) []float64 {
	if !r.BF16 {
		return x
	}
	out := make([]float64, len(x))
	for k, v := range x {
		out[k] = float64(spmm.RoundBF16(float32(v)))
	}
	return out
}

// RefParam is one parameter matrix of the reference, with its gradient and
// optimizer state.
type RefParam struct {
	Name       string
	Rows, Cols int
	W, G, m, v []float64
	decay      bool
}

// NewReference builds the reference model over the normalised adjacency,
// features (N×Features), labels and training mask. The adjacency is the
// layers' aggregation: Â for GCN layers, D^-1 A (MeanAdjacency) for SAGE;
// GAT layers attend over the pattern of Â (self loops included) and
// ignore its values.
func NewReference(cfg Config, opt Optimizer, adj *spmm.CSR, features []float32, labels []int32, train []bool) *Reference {
	n := adj.Rows
	if len(features) != n*cfg.Features || len(labels) != n || len(train) != n {
		panic(fmt.Sprintf("gcn: reference data sizes %d, %d, %d for %d vertices", len(features), len(labels), len(train), n))
	}
	if cfg.Layer == GATLayer && (cfg.Norm || cfg.Residual) {
		panic("gcn: reference of a GAT model with norm or residual, which GAT layers refuse (Config.Validate)")
	}
	r := &Reference{Cfg: cfg, Opt: opt, adj: adj, labels: labels, train: train, n: n}
	r.x = make([]float64, len(features))
	for i, f := range features {
		r.x[i] = float64(f)
	}
	for _, s := range paramShapes(cfg) {
		p := &RefParam{Name: s.name, Rows: s.rows, Cols: s.cols, decay: !s.isNorm}
		p.W = make([]float64, s.rows*s.cols)
		for i := 0; i < s.rows; i++ {
			for j := 0; j < s.cols; j++ {
				p.W[i*s.cols+j] = s.init(cfg.Seed, i, j)
			}
		}
		p.G = make([]float64, len(p.W))
		p.m = make([]float64, len(p.W))
		p.v = make([]float64, len(p.W))
		r.Params = append(r.Params, p)
	}
	return r
}

// refTape records what the backward pass needs.
type refTape struct {
	projIn []float64
	layers []refLayerTape
	headIn []float64 // after dropout
	logits []float64
}

type refLayerTape struct {
	in, inDrop, h, z, u, rms, act []float64
	// act is the output of norm/identity before ReLU (for the ReLU mask).
	gat *refGATTape // a GAT layer's (reference_gat.go)
}

// Forward computes the logits (N×Classes). With training set, dropout is
// applied with the masks of the given step.
func (r *Reference) Forward(training bool, step int) []float64 {
	logits, _ := r.forward(training, step)
	return logits
}

func (r *Reference) forward(training bool, step int) ([]float64, *refTape) {
	cfg := r.Cfg
	tp := &refTape{}
	pi := 0
	h := r.x
	width := cfg.Features
	if cfg.InputProjection {
		p := r.Params[pi]
		pi++
		tp.projIn = h
		h = matMul(r.bf(h), r.n, width, r.bf(p.W), p.Cols)
		width = p.Cols
	}
	for l, s := range cfg.layers() {
		lt := refLayerTape{in: h}
		lt.inDrop = r.dropout(h, width, training, step, l)
		if s.heads > 0 {
			var out []float64
			out, lt.gat = r.gatForward(s, l, lt.inDrop, r.Params[pi:pi+4], training, step)
			pi += 4
			tp.layers = append(tp.layers, lt)
			h, width = out, s.out
			continue
		}
		W := r.Params[pi]
		pi++
		lt.h = spMul(r.adj, r.bf(lt.inDrop), width)
		z := matMul(r.bf(lt.h), r.n, width, r.bf(W.W), s.out)
		if s.self {
			// SAGE: the input's own row times W_self.
			ws := r.Params[pi]
			pi++
			for k, v := range matMul(r.bf(lt.inDrop), r.n, width, r.bf(ws.W), s.out) {
				z[k] += v
			}
		}
		lt.z = z
		out := z
		if s.hidden {
			if s.norm {
				g := r.Params[pi]
				pi++
				lt.u, lt.rms = make([]float64, len(z)), make([]float64, r.n)
				out = make([]float64, len(z))
				for i := 0; i < r.n; i++ {
					ss := 0.0
					for j := 0; j < s.out; j++ {
						ss += z[i*s.out+j] * z[i*s.out+j]
					}
					rms := math.Sqrt(ss/float64(s.out) + NormEps)
					lt.rms[i] = rms
					for j := 0; j < s.out; j++ {
						lt.u[i*s.out+j] = z[i*s.out+j] / rms
						out[i*s.out+j] = lt.u[i*s.out+j] * g.W[j]
					}
				}
			}
			lt.act = out
			relu := make([]float64, len(out))
			for k, v := range out {
				relu[k] = math.Max(v, 0)
			}
			out = relu
			if s.residual {
				for k := range out {
					out[k] += h[k]
				}
			}
		}
		tp.layers = append(tp.layers, lt)
		h, width = out, s.out
	}
	if cfg.OutputHead {
		p := r.Params[pi]
		tp.headIn = r.dropout(h, width, training, step, cfg.headSite())
		h = matMul(r.bf(tp.headIn), r.n, width, r.bf(p.W), p.Cols)
	}
	tp.logits = h
	return h, tp
}

func (r *Reference) dropout(h []float64, width int, training bool, step, site int) []float64 {
	p := r.Cfg.Dropout
	if !training || p == 0 {
		return h
	}
	out := make([]float64, len(h))
	for i := 0; i < r.n; i++ {
		for j := 0; j < width; j++ {
			v := int32(i)
			if r.Verts != nil {
				v = r.Verts[i]
			}
			if dropKeep(r.Cfg.Seed, step, site, v, j, p) {
				out[i*width+j] = h[i*width+j] / (1 - p)
			}
		}
	}
	return out
}

// LossAndGrad runs a training forward pass with the dropout masks of step,
// returns the mean cross-entropy over the training vertices and leaves the
// gradient of every parameter in its G.
func (r *Reference) LossAndGrad(step int) float64 {
	cfg := r.Cfg
	logits, tp := r.forward(true, step)
	c := cfg.Classes
	nTrain := 0
	for _, t := range r.train {
		if t {
			nTrain++
		}
	}
	loss := 0.0
	d := make([]float64, len(logits))
	for i := 0; i < r.n; i++ {
		if !r.train[i] {
			continue
		}
		row := logits[i*c : (i+1)*c]
		mx, se := rowMaxExpSum(row)
		loss += math.Log(se) + mx - row[r.labels[i]]
		for j, v := range row {
			d[i*c+j] = math.Exp(v-mx) / se / float64(nTrain)
		}
		d[i*c+int(r.labels[i])] -= 1 / float64(nTrain)
	}
	for _, p := range r.Params {
		clear(p.G)
	}
	pi := len(r.Params) - 1
	width := c
	if cfg.OutputHead {
		p := r.Params[pi]
		pi--
		copy(p.G, matMulTN(r.bf(tp.headIn), r.n, p.Rows, r.bf(d), c))
		dIn := matMulNT(r.bf(d), r.n, c, r.bf(p.W), p.Rows)
		width = p.Rows
		d = r.dropout(dIn, width, true, step, cfg.headSite())
	}
	specs := cfg.layers()
	for l := cfg.Layers - 1; l >= 0; l-- {
		s, lt := specs[l], tp.layers[l]
		if s.heads > 0 {
			// weight, att_src, att_dst, bias end at pi.
			d = r.gatBackward(s, l, lt, r.Params[pi-3:pi+1], d, step, s.needInputGrad)
			pi -= 4
			if !s.needInputGrad {
				break
			}
			width = s.in
			continue
		}
		var dRes []float64
		dz := d
		if s.hidden {
			if s.residual {
				dRes = d
			}
			da := make([]float64, len(d))
			for k := range d {
				if lt.act[k] > 0 {
					da[k] = d[k]
				}
			}
			dz = da
			if s.norm {
				g := r.Params[pi]
				pi--
				dz = make([]float64, len(da))
				for i := 0; i < r.n; i++ {
					dot := 0.0
					for j := 0; j < s.out; j++ {
						k := i*s.out + j
						g.G[j] += da[k] * lt.u[k]
						dot += da[k] * g.W[j] * lt.u[k]
					}
					for j := 0; j < s.out; j++ {
						k := i*s.out + j
						dz[k] = (da[k]*g.W[j] - lt.u[k]*dot/float64(s.out)) / lt.rms[i]
					}
				}
			}
		}
		var ws *RefParam
		if s.self {
			ws = r.Params[pi]
			pi--
			copy(ws.G, matMulTN(r.bf(lt.inDrop), r.n, s.in, r.bf(dz), s.out))
		}
		W := r.Params[pi]
		pi--
		copy(W.G, matMulTN(r.bf(lt.h), r.n, s.in, r.bf(dz), s.out))
		if !s.needInputGrad {
			break
		}
		dh := matMulNT(r.bf(dz), r.n, s.out, r.bf(W.W), s.in)
		dIn := spMulT(r.adj, r.bf(dh), s.in)
		if s.self {
			for k, v := range matMulNT(r.bf(dz), r.n, s.out, r.bf(ws.W), s.in) {
				dIn[k] += v
			}
		}
		dIn = r.dropout(dIn, s.in, true, step, l)
		for k := range dRes {
			dIn[k] += dRes[k]
		}
		d = dIn
		width = s.in
	}
	if cfg.InputProjection {
		p := r.Params[0]
		copy(p.G, matMulTN(r.bf(tp.projIn), r.n, p.Rows, r.bf(d), width))
	}
	return loss / float64(nTrain)
}

// Step applies one optimizer update with the current gradients.
func (r *Reference) Step() {
	r.t++
	st := r.Opt.step(r.t)
	for _, p := range r.Params {
		for k := range p.W {
			p.W[k], p.m[k], p.v[k] = st.update(p.W[k], p.G[k], p.m[k], p.v[k], p.decay)
		}
	}
}

// rowMaxExpSum returns a row's maximum and Σ exp(v − max): the
// log-sum-exp of the training loss and of the validation loss.
func rowMaxExpSum(row []float64) (mx, se float64) {
	mx = math.Inf(-1)
	for _, v := range row {
		mx = math.Max(mx, v)
	}
	for _, v := range row {
		se += math.Exp(v - mx)
	}
	return mx, se
}

// Loss returns the mean softmax cross-entropy of logits over the vertices
// in mask (LossAndGrad's formula: log-sum-exp with the row max), 0 when
// mask holds none: with the validation mask, an evaluation's ValLoss.
func (r *Reference) Loss(logits []float64, mask []bool) float64 {
	c := r.Cfg.Classes
	loss, count := 0.0, 0
	for i := 0; i < r.n; i++ {
		if !mask[i] {
			continue
		}
		row := logits[i*c : (i+1)*c]
		mx, se := rowMaxExpSum(row)
		loss += math.Log(se) + mx - row[r.labels[i]]
		count++
	}
	if count == 0 {
		return 0
	}
	return loss / float64(count)
}

// Accuracy returns the fraction of vertices in mask whose argmax logit
// (lowest class on ties) is the label.
func (r *Reference) Accuracy(logits []float64, mask []bool) float64 {
	c := r.Cfg.Classes
	right, total := 0, 0
	for i := 0; i < r.n; i++ {
		if !mask[i] {
			continue
		}
		best := 0
		for j := 1; j < c; j++ {
			if logits[i*c+j] > logits[i*c+best] {
				best = j
			}
		}
		total++
		if int32(best) == r.labels[i] {
			right++
		}
	}
	if total == 0 {
		return 0
	}
	return float64(right) / float64(total)
}

// a (n×k) · b (k×m).
func matMul(a []float64, n, k int, b []float64, m int) []float64 {
	out := make([]float64, n*m)
	for i := 0; i < n; i++ {
		for p := 0; p < k; p++ {
			av := a[i*k+p]
			if av == 0 {
				continue
			}
			for j := 0; j < m; j++ {
				out[i*m+j] += av * b[p*m+j]
			}
		}
	}
	return out
}

// aᵀ · b with a n×k, b n×m.
func matMulTN(a []float64, n, k int, b []float64, m int) []float64 {
	out := make([]float64, k*m)
	for i := 0; i < n; i++ {
		for p := 0; p < k; p++ {
			av := a[i*k+p]
			for j := 0; j < m; j++ {
				out[p*m+j] += av * b[i*m+j]
			}
		}
	}
	return out
}

// a · bᵀ with a n×m, b k×m.
func matMulNT(a []float64, n, m int, b []float64, k int) []float64 {
	out := make([]float64, n*k)
	for i := 0; i < n; i++ {
		for p := 0; p < k; p++ {
			s := 0.0
			for j := 0; j < m; j++ {
				s += a[i*m+j] * b[p*m+j]
			}
			out[i*k+p] = s
		}
	}
	return out
}

func spMul(a *spmm.CSR, x []float64, w int) []float64 {
	out := make([]float64, a.Rows*w)
	for i := 0; i < a.Rows; i++ {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			v, c := float64(a.Val[p]), int(a.ColIdx[p])
			for j := 0; j < w; j++ {
				out[i*w+j] += v * x[c*w+j]
			}
		}
	}
	return out
}

func spMulT(a *spmm.CSR, x []float64, w int) []float64 {
	out := make([]float64, a.Cols*w)
	for i := 0; i < a.Rows; i++ {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			v, c := float64(a.Val[p]), int(a.ColIdx[p])
			for j := 0; j < w; j++ {
				out[c*w+j] += v * x[i*w+j]
			}
		}
	}
	return out
}
