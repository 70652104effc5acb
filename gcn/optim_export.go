package gcn

// Update applies optimizer step t (counting from 1) to one parameter entry
// w with gradient g and moments m, v, in float64: the one definition of the
// update (optim.go), exported for other training algorithms (package
// cagnet) so that they step exactly as the reference does.
func (o Optimizer) Update(t int, w, g, m, v float64, decay bool) (w2, m2, v2 float64) {
	return o.step(t).update(w, g, m, v, decay)
}
