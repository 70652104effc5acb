// Package gcn owns the model scalegnn trains and its 3D-parallel execution:
// the input projection, the GCN layers (sparse aggregation, dense
// transformation, optional RMSNorm, ReLU, dropout and residual), the output
// head, the distributed softmax cross-entropy and argmax accuracy, and the
// Adam/AdamW/SGD optimizers. Every tensor is laid out over the grid exactly
// as ../DESIGN.md prescribes (layer rotation over three adjacency shards,
// optional double permutation).
//
// Reference is a serial float64 implementation of the same model, written
// independently of the distributed one; tests hold every distributed run to
// it. Random draws (weight initialisation, dropout masks) are counter-based
// functions of (seed, site, vertex id, column), so the serial model, any
// grid shape and any vertex permutation see identical draws.
package gcn
