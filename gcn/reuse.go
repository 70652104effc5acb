package gcn

import "scalegnn/device"

// Buffer reuse in the forward and the backward pass. The arena hands out
// memory that lives until the next pass, so every matrix a step takes
// adds to its peak. The
// backward pass writes two matrices per layer, dH and dF̃ (its input's
// gradient); where a forward matrix of the same shape is dead by then, it
// writes into that one instead of taking a new one, and it applies the
// dropout masks to its gradients in place. On one rank a 3-layer GCN's
// step then takes no more matrices than it keeps from the forward pass,
// about what PyTorch's autograd holds at its peak.
//
// backwardReuse is the one rule, read by backward.go and by the arena plan
// (arena_plan.go), which must take exactly what the pass takes.
type backwardReuse struct {
	// dhInH: dH is written into the layer's H (rows R, cols Q, the same
	// shape) once the weight gradient Hᵀ·dZ has read it. Not in mixed
	// precision (H is kept in bfloat16 only), and over a P group of
	// several ranks not for SAGE (dS is stacked under dH there, twice H's
	// rows: dsStacked) nor when the backward pass overlaps dW with dH's
	// sum (dW then reads H while dH is summed).
	dhInH bool
	// dhInDZ: in mixed precision dH is written into dZ's float32 buffer,
	// which is dead once dZ has been rounded (lt.dzb: both weight
	// gradients and dH read the rounded copy), where the two have the same
	// shape (a layer as wide out as in, without SAGE's stacked dS).
	dhInDZ bool
	// dhbInH: in mixed precision, where dH needs no sum (a P group of
	// one rank, so no SAGE dS stacked beside it), dH is only the backward
	// SpMM's operand, which rounds it to bfloat16 anyway: it is rounded
	// as the GEMM writes it (device.GemmBF16ToBF16, a block of rows at a
	// time through a small float32 scratch) into the layer's bfloat16 H,
	// dead once the weight gradient Hᵀ·dZ has read it, and the SpMM
	// reads it from there. No float32 dH, and no rounding in the SpMM's
	// staging: the same bits at the same place (at R-MAT scale 22, a
	// 3-layer GCN 128 on one rank, 2 GiB less: the last layer, 32 wide
	// out, had no dZ of dH's shape to take).
	dhbInH bool
	// dfInAct: dF̃ is written into layer l-1's ReLU output, layer l's
	// input (rows P, cols Q of layer l's input layout, the same shape),
	// which only the forward pass reads when that ReLU recorded its
	// positions as bits: layer l-1 a GCN or SAGE hidden layer without norm
	// (which reads the output back) or residual (whose sum, not the ReLU
	// output, is layer l's input).
	dfInAct bool
}

// dzInNextH reports whether, in mixed precision, layer l's rounded dZ
// (dz elements) is written into layer l+1's bfloat16 H (nextH elements),
// which layer l+1's weight gradient read last, before layer l's backward
// pass began: layer l+1 a GCN or SAGE layer (a GAT layer keeps no H), and
// room for dZ.
func dzInNextH(specs []layerSpec, l int, prec device.Precision, dz, nextH int64) bool {
	return prec == device.BF16 && specs[l].heads == 0 && l+1 < len(specs) && specs[l+1].heads == 0 && dz <= nextH
}

// reuse returns layer l's backward reuse for a model of layers specs, in
// precision prec, with overlap on, a P group of pSize ranks and local
// blocks dIn and dOut columns wide; prevActB says that layer l-1 kept its
// output in bfloat16 only (actBF16), so that there is no float32 output
// for dF̃ to go into.
func reuse(specs []layerSpec, l int, prec device.Precision, overlap bool, pSize, dIn, dOut int, prevActB bool) backwardReuse {
	sp := specs[l]
	var r backwardReuse
	if sp.heads > 0 || !sp.needInputGrad {
		return r
	}
	r.dhInH = prec != device.BF16 && (pSize == 1 || !sp.self && !overlap)
	r.dhbInH = prec == device.BF16 && pSize == 1
	r.dhInDZ = prec == device.BF16 && !sp.self && dIn == dOut && !r.dhbInH
	if l > 0 {
		prev := specs[l-1]
		r.dfInAct = prev.heads == 0 && prev.hidden && !prev.norm && !prev.residual && !prevActB
	}
	return r
}

// dsPlace is where a SAGE layer's backward pass puts dS = dZ·W_selfᵀ,
// the gradient of its redistributed input F̃_R.
type dsPlace int

const (
	dsNone dsPlace = iota // not a SAGE layer
	// dsStacked: under dH, in one matrix of twice H's rows, so that one
	// all-reduce over the P group (several ranks) sums both.
	dsStacked
	// dsOwn: in a matrix of its own, H's shape: over a P group of one
	// rank there is nothing to sum, and dH goes where a GCN layer's
	// goes (dhInH, dhbInH). dS goes back through the inverse of the
	// forward redistribution into a second one, added into dF̃.
	dsOwn
	// dsInDF: added into dF̃ by its own GEMM (beta 1) once dF̃'s SpMM has
	// written it: F̃_R is F̃ (selfInInput), so dS is in dF̃'s layout and
	// order, and it takes no memory. (R is one rank too: nothing is
	// summed into dF̃ after it.)
	dsInDF
)

// dsWhere is the one rule for dsPlace: layer sp over a P group of pSize
// ranks, selfIn being selfInInput's answer for the model's grid. Before,
// dS was stacked under dH on every grid: on one rank at R-MAT scale 22,
// width 128, a SAGE layer's backward pass took 4 GiB of float32 (dH and
// dS) where it now takes none.
func dsWhere(sp layerSpec, pSize int, selfIn bool) dsPlace {
	switch {
	case !sp.self:
		return dsNone
	case pSize > 1:
		return dsStacked
	case selfIn:
		return dsInDF
	}
	return dsOwn
}

// selfInInput reports whether a SAGE layer's redistributed input F̃_R
// is its input after dropout itself rather than a copy: on a grid of one
// rank (ranks = X·Y·Z) whose two vertex orders are one (singleOrder), the
// redistribution would copy every row in place. F̃ is then read by the
// backward pass's dW_self, which runs before dF̃ is written into the
// previous layer's output (dfInAct; F̃'s memory without dropout), and the
// self term's input gradient dS, in F̃'s layout and order already, adds
// into dF̃ without its copy back. One matrix of the input's width less in
// each pass per SAGE layer: 2 GiB each at R-MAT scale 22, width 128.
func selfInInput(ranks int, singleOrder bool) bool { return ranks == 1 && singleOrder }

// actBF16 reports whether, in mixed precision, hidden layer l's output
// (the ReLU's) is kept in bfloat16 only, in a pass that ends at layer
// last: Z = H·W (+ F̃_R·W_self for SAGE) is computed a block of rows at
// a time through the pass's float32 scratch, rectified (its positions
// recorded), with dropout in training put through layer l+1's dropout
// (its mask recorded), and rounded into the bfloat16 output (lt.actb), so
// that neither Z nor F̃ exists whole in float32. Layer l+1's products,
// the output's only readers, then read it as their bfloat16 operand,
// which they rounded into the device's staging before: the same bits at
// the same place (F̃ is the ReLU's output with the mask applied, in
// float32, then rounded, either way). Layer l must be a GCN or SAGE
// hidden layer without norm or residual (whose backward passes read the
// float32 output) whose Z needs no sum (a Q group of one rank), and layer
// l+1 must read its input only through its dropout, its aggregation and,
// where its self term reads the input where it is (selfIn, selfInInput),
// a SAGE self term (input0Direct without dropout: no residual or GAT,
// and no SAGE term that redistributes its input). A shorter pass
// (Embeddings) keeps its last layer's output in float32. At R-MAT scale
// 22 (3-layer GCN 128, one rank), with actbInPrev and dfInActBF16 below,
// this takes 2 GiB off a pass without dropout.
func actBF16(specs []layerSpec, l, last int, prec device.Precision, qSize int, selfIn bool) bool {
	if prec != device.BF16 || l >= last {
		return false
	}
	sp := specs[l]
	return sp.heads == 0 && sp.hidden && !sp.norm && !sp.residual && qSize == 1 &&
		input0Direct(specs[l+1], false, selfIn)
}

// actbInPrev reports whether layer l (sp)'s bfloat16 output (n elements)
// goes into layer l-1's (prev elements, 0 unless layer l-1 kept its
// output in bfloat16): that one is dead once layer l's aggregation has
// read it, and the backward pass writes layer l's dF̃ there
// (dfInActBF16) only after layer l's dZ, which came back in the same
// memory, has been read by both its products. Not for a SAGE layer l,
// whose weight gradient dW_self reads that input (F̃) in the backward
// pass.
func actbInPrev(sp layerSpec, n, prev int64) bool { return !sp.self && prev > 0 && n <= prev }

// dfInActBF16 reports whether layer l's dF̃ is computed in bfloat16, into
// layer l-1's bfloat16 output (for a layer l-1 that kept one), where layer l-1's ReLU
// gradient masks it in place (device.ReLUBackwardBitsBF16) and it is
// then layer l-1's rounded dZ (lt.dzb): layer l-1 rounds dZ anyway
// before any product reads it, and the ReLU's select commutes with the
// rounding, so the bits are those of the float32 dF̃ masked and rounded.
// dF̃ must need no sum (an R group of one rank; actBF16 already rules out
// a residual on it), and layer l-1 must not need dZ in float32: its dH
// goes into its H (dhbInH, a P group of one rank) or it has none (the
// first layer). In training with dropout, layer l's dropout mask applies
// to dF̃ before the ReLU's, with its scale by 1/(1−p), which does not
// commute with the rounding: there the SpMM masks each float32 sum by the
// dropout and the ReLU before it rounds it
// (device.SpMMBF16ToBF16Masked), as the float32 path masks dF̃ and rounds
// dZ: again the same bits. A SAGE layer l (whose self term then reads its
// input where it is: dsInDF) adds dS into dF̃ before either mask, so its
// dF̃ is summed in float32 in the pass's one dF̃ buffer (dfSelfBF16), then
// masked and rounded: the float32 path's operations in its order.
func dfInActBF16(specs []layerSpec, l, rSize, prevPSize int) bool {
	return rSize == 1 && (prevPSize == 1 || !specs[l-1].needInputGrad)
}

// zInInput reports whether layer l's output Z (rows R, cols P: nR×dOut
// elements) is written into the memory of its input, layer l-1's ReLU
// output (nIn elements), in both precisions: that input is dead once
// layer l's aggregation (or dropout) has read it, where the backward pass
// reads it only as the place for layer l's dF̃ (dfInAct), which it writes
// after layer l's dZ is dead. Layer l must itself be a GCN hidden layer
// without norm (whose backward pass reads its output back) or residual
// (whose sum reads the input after Z), its dH must not be written into
// its dZ (dhInDZ: the SpMM would read and write the same memory), and Z
// must fit. In a 3-layer GCN of hidden width h this saves a rows × h
// matrix per rank (2 GiB at R-MAT scale 22 on one rank). Embeddings
// stops the forward pass at the layer it reads, which is then not
// overwritten.
func zInInput(specs []layerSpec, l int, prec device.Precision, overlap bool, pSize, dIn, dOut, nR, nIn int) bool {
	if l == 0 {
		return false
	}
	sp := specs[l]
	ru := reuse(specs, l, prec, overlap, pSize, dIn, dOut, false)
	return ru.dfInAct && !ru.dhInDZ && sp.heads == 0 && !sp.self && sp.hidden && !sp.norm && !sp.residual &&
		int64(nR)*int64(dOut) <= int64(nIn)
}

// zInH reports whether, in mixed precision, a layer's Z (z elements) is
// written into the float32 H its aggregation summed over a P group of
// several ranks (h elements, 0 where there was none) before rounding it
// into the bfloat16 H that every product reads: that float32 H is dead
// from then on. Where zInInput applies it goes first. Without it, mixed
// precision on such grids took every float32 matrix float32 training
// takes and its bfloat16 copies beside (R-MAT 22 on 2×2×2 ranks: 5.17
// GiB of arena a rank against float32's 4.15).
func zInH(h, z int) bool { return h > 0 && z <= h }
