package gcn

import "math"

// The serial float64 GAT layer (see GAT for the definition). The
// reference reads only the pattern of its adjacency: the edges (i, j) of
// Â, self loops included, are the entries a row's softmax runs over; Â's
// values are ignored. A mini-batch's reference (SerialBatch) therefore
// attends over the induced subgraph's edges, self loops included, whatever
// the rescaling of its values.

// refGATTape is what a GAT layer's backward pass needs: the projection,
// the scores' inputs, the attention coefficients before and after
// dropout, and the aggregation before the nonlinearity. Per-edge arrays
// are entry-major, entry p (in the adjacency's CSR order) and head k at
// p·K+k, as on the devices.
type refGATTape struct {
	heads, f int       // K and F'
	y        []float64 // n × K·F', Y = H_dropped · W
	s, t     []float64 // n × K
	alpha    []float64 // nnz × K, the softmax
	kept     []float64 // nnz × K, α after attention dropout (alpha itself without)
	o        []float64 // n × K·F', Σ_j α'_ijk Y_k[j] + b
}

// attentionDropout reports whether attention dropout applies to a pass.
func (r *Reference) attentionDropout(training bool) bool { return training && r.Cfg.Dropout > 0 }

// vertex returns the global id of row i, the dropout masks' key.
func (r *Reference) vertex(i int) int32 {
	if r.Verts != nil {
		return r.Verts[i]
	}
	return int32(i)
}

// gatForward runs GAT layer l of spec s on its input after dropout, with
// the parameters ps = [weight, att_src, att_dst, bias], and returns the layer's
// output (ELU of the concatenated heads when hidden, their mean for the
// last layer) and its tape.
func (r *Reference) gatForward(s layerSpec, l int, inDrop []float64, ps []*RefParam, training bool, step int) ([]float64, *refGATTape) {
	K, F := s.heads, s.headWidth()
	C := K * F
	n, a := r.n, r.adj
	W, src, dst, bias := ps[0], ps[1], ps[2], ps[3]
	g := &refGATTape{heads: K, f: F}
	g.y = matMul(r.bf(inDrop), n, s.in, r.bf(W.W), C)
	g.s, g.t = make([]float64, n*K), make([]float64, n*K)
	for i := 0; i < n; i++ {
		for k := 0; k < K; k++ {
			ss, tt := 0.0, 0.0
			for c := 0; c < F; c++ {
				ss += g.y[i*C+k*F+c] * src.W[k*F+c]
				tt += g.y[i*C+k*F+c] * dst.W[k*F+c]
			}
			g.s[i*K+k], g.t[i*K+k] = ss, tt
		}
	}
	nnz := int(a.RowPtr[n])
	g.alpha = make([]float64, nnz*K)
	mx, sum := make([]float64, K), make([]float64, K)
	for i := 0; i < n; i++ {
		for k := range mx {
			mx[k], sum[k] = math.Inf(-1), 0
		}
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			j := int(a.ColIdx[p])
			for k := 0; k < K; k++ {
				e := leakyRelu(g.s[i*K+k] + g.t[j*K+k])
				g.alpha[int(p)*K+k] = e
				mx[k] = math.Max(mx[k], e)
			}
		}
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			for k := 0; k < K; k++ {
				v := math.Exp(g.alpha[int(p)*K+k] - mx[k])
				g.alpha[int(p)*K+k] = v
				sum[k] += v
			}
		}
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			for k := 0; k < K; k++ {
				g.alpha[int(p)*K+k] /= sum[k]
			}
		}
	}
	g.kept = r.attentionMask(g.alpha, K, l, training, step)
	g.o = make([]float64, n*C)
	for i := 0; i < n; i++ {
		copy(g.o[i*C:(i+1)*C], bias.W)
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			j := int(a.ColIdx[p])
			for k := 0; k < K; k++ {
				w := g.kept[int(p)*K+k]
				for c := k * F; c < (k+1)*F; c++ {
					g.o[i*C+c] += w * g.y[j*C+c]
				}
			}
		}
	}
	if s.hidden {
		out := make([]float64, n*C)
		for k, v := range g.o {
			if v > 0 {
				out[k] = v
			} else {
				out[k] = math.Expm1(v)
			}
		}
		return out, g
	}
	out := make([]float64, n*F)
	for i := 0; i < n; i++ {
		for k := 0; k < K; k++ {
			for c := 0; c < F; c++ {
				out[i*F+c] += g.o[i*C+k*F+c] / float64(K)
			}
		}
	}
	return out, g
}

// attentionMask applies layer l's attention dropout to per-edge values
// (nnz × K): entry (i, j), head k is kept by the draw of (seed, step,
// AttentionSite(l), global i) at column global j·K + k and scaled by
// 1/(1−p). Outside training, or with p = 0, it returns v itself.
func (r *Reference) attentionMask(v []float64, K, l int, training bool, step int) []float64 {
	if !r.attentionDropout(training) {
		return v
	}
	p := r.Cfg.Dropout
	out := make([]float64, len(v))
	a := r.adj
	for i := 0; i < r.n; i++ {
		m := newDropMask(r.Cfg.Seed, step, r.Cfg.AttentionSite(l), r.vertex(i), p)
		for q := a.RowPtr[i]; q < a.RowPtr[i+1]; q++ {
			col := int(r.vertex(int(a.ColIdx[q]))) * K
			for k := 0; k < K; k++ {
				if m.keep01(col+k) == 1 {
					out[int(q)*K+k] = v[int(q)*K+k] / (1 - p)
				}
			}
		}
	}
	return out
}

// gatBackward takes the gradient of GAT layer l's output, leaves the
// gradients of ps = [weight, att_src, att_dst, bias] in their G, and returns
// the gradient of the layer's input before its dropout (nil when
// inputGrad is false).
func (r *Reference) gatBackward(s layerSpec, l int, lt refLayerTape, ps []*RefParam, dOut []float64, step int, inputGrad bool) []float64 {
	g := lt.gat
	K, F := g.heads, g.f
	C := K * F
	n, a := r.n, r.adj
	W, src, dst, bias := ps[0], ps[1], ps[2], ps[3]
	dO := make([]float64, n*C)
	if s.hidden {
		// ELU'(x) = 1 for x > 0, e^x otherwise.
		for k, v := range g.o {
			if v > 0 {
				dO[k] = dOut[k]
			} else {
				dO[k] = dOut[k] * math.Exp(v)
			}
		}
	} else {
		for i := 0; i < n; i++ {
			for k := 0; k < K; k++ {
				for c := 0; c < F; c++ {
					dO[i*C+k*F+c] = dOut[i*F+c] / float64(K)
				}
			}
		}
	}
	for k, v := range dO {
		bias.G[k%C] += v
	}
	nnz := int(a.RowPtr[n])
	dY := make([]float64, n*C)
	dKept := make([]float64, nnz*K)
	for i := 0; i < n; i++ {
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			j := int(a.ColIdx[p])
			for k := 0; k < K; k++ {
				w, d := g.kept[int(p)*K+k], 0.0
				for c := k * F; c < (k+1)*F; c++ {
					d += dO[i*C+c] * g.y[j*C+c]
					dY[j*C+c] += w * dO[i*C+c]
				}
				dKept[int(p)*K+k] = d
			}
		}
	}
	// Through the dropout mask (the same draws), then the softmax:
	// de_p = α_p (dα_p − Σ_row α dα), then the LeakyReLU.
	dAlpha := r.attentionMask(dKept, K, l, true, step)
	ds, dt := make([]float64, n*K), make([]float64, n*K)
	dot := make([]float64, K)
	for i := 0; i < n; i++ {
		clear(dot)
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			for k := 0; k < K; k++ {
				dot[k] += g.alpha[int(p)*K+k] * dAlpha[int(p)*K+k]
			}
		}
		for p := a.RowPtr[i]; p < a.RowPtr[i+1]; p++ {
			j := int(a.ColIdx[p])
			for k := 0; k < K; k++ {
				q := int(p)*K + k
				dz := g.alpha[q] * (dAlpha[q] - dot[k])
				if !(g.s[i*K+k]+g.t[j*K+k] > 0) {
					dz *= GATSlope
				}
				ds[i*K+k] += dz
				dt[j*K+k] += dz
			}
		}
	}
	// s = Y·a_src and t = Y·a_dst per head.
	for i := 0; i < n; i++ {
		for k := 0; k < K; k++ {
			for c := 0; c < F; c++ {
				y := g.y[i*C+k*F+c]
				src.G[k*F+c] += ds[i*K+k] * y
				dst.G[k*F+c] += dt[i*K+k] * y
				dY[i*C+k*F+c] += ds[i*K+k]*src.W[k*F+c] + dt[i*K+k]*dst.W[k*F+c]
			}
		}
	}
	copy(W.G, matMulTN(r.bf(lt.inDrop), n, s.in, r.bf(dY), C))
	if !inputGrad {
		return nil
	}
	dIn := matMulNT(r.bf(dY), n, C, r.bf(W.W), s.in)
	return r.dropout(dIn, s.in, true, step, l)
}

func leakyRelu(x float64) float64 {
	if x > 0 {
		return x
	}
	return GATSlope * x
}
