package devicetest

import "math"

// References. The float64 ones define each operation; the gcnOrder ones
// repeat gcn's float32 loops operation for operation (the code a device
// must match bit for bit so that training stays bit-identical), and the
// dropout draws are gcn/random.go's, tied to gcn by the golden masks in
// golden.go.

func mix(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	z ^= z >> 31
	return z
}

func hash4(a, b, c, d uint64) uint64 {
	h := mix(a + 0x9e3779b97f4a7c15)
	h = mix(h ^ (b + 0x632be59bd9b4e019))
	h = mix(h ^ (c + 0x85ebca77c2b2ae63))
	return mix(h ^ (d + 0xc2b2ae3d27d4eb4f))
}

// dropKeep is gcn's dropKeep (gcn/random.go), written out without the
// branch-free trick: kept when the 53-bit draw is at least p·2^53.
func dropKeep(seed uint64, step, site int, vertex int32, col int, p float64) bool {
	key := hash4(seed, 2<<32|uint64(site), uint64(step), uint64(vertex))
	draw := mix(key+uint64(col)*0x9e3779b97f4a7c15) >> 11
	return draw >= uint64(p*(1<<53))
}

// gcnRMSNorm is gcn's rmsNormForward (gcn/forward.go) on one block whose
// sums of squares need no all-reduce: returns out, u, rms.
func gcnRMSNorm(z []float32, rows, cols, n int, eps float64, w []float32) (out, u, rms []float32) {
	ss := make([]float32, rows)
	for i := 0; i < rows; i++ {
		var s float32
		for _, v := range z[i*cols : (i+1)*cols] {
			s += v * v
		}
		ss[i] = s
	}
	rms = make([]float32, rows)
	u = make([]float32, len(z))
	out = make([]float32, len(z))
	for i := 0; i < rows; i++ {
		r := float32(math.Sqrt(float64(ss[i])/float64(n) + eps))
		rms[i] = r
		for j := 0; j < cols; j++ {
			k := i*cols + j
			u[k] = z[k] / r
			out[k] = u[k] * w[j]
		}
	}
	return out, u, rms
}

// gcnRMSNormBackward is gcn's rmsNormBackward (gcn/backward.go) without
// all-reduces: returns dz and the scale's gradient.
func gcnRMSNormBackward(da, u, rms []float32, rows, cols, n int, w []float32) (dz, g []float32) {
	g = make([]float32, cols)
	dot := make([]float32, rows)
	for i := 0; i < rows; i++ {
		var s float32
		for j := 0; j < cols; j++ {
			k := i*cols + j
			g[j] += da[k] * u[k]
			s += da[k] * w[j] * u[k]
		}
		dot[i] = s
	}
	dz = make([]float32, len(da))
	inv := 1 / float32(n)
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			k := i*cols + j
			dz[k] = (da[k]*w[j] - u[k]*dot[i]*inv) / rms[i]
		}
	}
	return dz, g
}

// gcnLoss is gcn's loss (gcn/loss.go) on one block holding every class
// (c0 = 0), before the 1/count scaling: the gradient, loss sum, count.
func gcnLoss(x []float32, rows, w int, labels []int32, train []uint8) ([]float32, float64, float64) {
	mx := make([]float32, rows)
	for i := range mx {
		mx[i] = float32(math.Inf(-1))
		for _, v := range x[i*w : (i+1)*w] {
			mx[i] = max(mx[i], v)
		}
	}
	sums := make([]float32, 2*rows)
	for i := 0; i < rows; i++ {
		var se float32
		for _, v := range x[i*w : (i+1)*w] {
			se += float32(math.Exp(float64(v - mx[i])))
		}
		sums[i] = se
		if lab := int(labels[i]); lab >= 0 && lab < w {
			sums[rows+i] = x[i*w+lab]
		}
	}
	var total [2]float64
	d := make([]float32, len(x))
	for i := 0; i < rows; i++ {
		if train[i] == 0 {
			continue
		}
		se := sums[i]
		total[0] += math.Log(float64(se)) + float64(mx[i]) - float64(sums[rows+i])
		total[1]++
		for j := 0; j < w; j++ {
			d[i*w+j] = float32(math.Exp(float64(x[i*w+j]-mx[i]))) / se
		}
		if lab := int(labels[i]); lab >= 0 && lab < w {
			d[i*w+lab]--
		}
	}
	return d, total[0], total[1]
}

// optimRef is gcn's step.update (gcn/optim.go): kind 0 SGD, 1 Adam, 2 AdamW.
func optimRef(kind int, lr, wd, b1, b2, eps, corr1, corr2, w, g, m, v float64) (float64, float64, float64) {
	switch kind {
	case 0:
		return w - lr*(g+wd*w), m, v
	case 1:
		g += wd * w
	}
	m = b1*m + (1-b1)*g
	v = b2*v + (1-b2)*g*g
	mh := m / corr1
	vh := v / corr2
	if kind == 2 {
		w -= lr * wd * w
	}
	return w - lr*mh/(math.Sqrt(vh)+eps), m, v
}
