// Package counter owns scalegnn's counter-based random numbers: every
// value is a pure function of its coordinates (seed, stream, step, vertex,
// column), so any rank draws exactly the entries of its own block, the
// serial reference draws the same ones, whatever the grid and the vertex
// order, and the step counter is the whole random state of a run. Package
// gcn draws the initial weights from it and package device the dropout
// masks (its C kernels carry a copy, checked bit for bit by devicetest).
//
// docs/architecture.md shows how this package fits with the others.
package counter
