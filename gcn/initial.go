package gcn

// InitialParam is the initial value of one whole parameter matrix, as
// every mode of the model draws it: other training modes (package
// neighbor) start from exactly gcn's weights, so a run of theirs that
// computes the same thing as a gcn run trains identically.
type InitialParam struct {
	Name       string
	Rows, Cols int
	// W is row-major, Rows×Cols, in float64 as the counter-based draw
	// gives it; the distributed model stores float32(W[k]).
	W []float64
	// Decay says whether weight decay applies (weights yes, norm scales no).
	Decay bool
}

// InitialParams returns every parameter of cfg in the model's order
// (input projection, then per GCN layer its weight, a SAGE layer's W_self
// and a norm scale, then the output head), initialised from cfg.Seed.
func InitialParams(cfg Config) []InitialParam {
	var out []InitialParam
	for _, s := range paramShapes(cfg) {
		p := InitialParam{Name: s.name, Rows: s.rows, Cols: s.cols, W: make([]float64, s.rows*s.cols), Decay: !s.isNorm}
		for i := 0; i < s.rows; i++ {
			for j := 0; j < s.cols; j++ {
				p.W[i*s.cols+j] = s.init(cfg.Seed, i, j)
			}
		}
		out = append(out, p)
	}
	return out
}
