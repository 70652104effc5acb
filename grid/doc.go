// Package grid owns the 4D process grid of scalegnn: the mapping between a
// world rank and its (d, x, y, z) coordinates, the X/Y/Z/data-parallel
// communicators, how a dimension of length n is cut into blocks over an
// axis, the per-layer rotation of the three axes of 3D parallel matrix
// multiplication, and the redistribution of a distributed matrix from one
// 2D layout to another (needed by residual connections). It also owns the
// shapes themselves: their text form (Shape.String, ParseShape, and text
// marshalling for JSON) and the enumeration of every shape of a number of
// ranks (Shapes), which the self-test, the performance model and automatic
// grid choice share.
//
// Rank mapping (Y fastest, then X, Z, D, so that Y- and X-groups are packed
// inside a node first):
//
//	y = r mod Gy
//	x = (r div Gy) mod Gx
//	z = (r div (Gy·Gx)) mod Gz
//	d = r div (Gy·Gx·Gz)
//
// docs/architecture.md shows how this package fits with the others.
package grid
