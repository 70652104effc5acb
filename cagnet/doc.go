// Package cagnet is CAGNET's 1.5D block-row full-graph GCN training
// (Tripathy, Yelick and Buluç, SC'20, §V-B, Algorithm 2), built on package
// device's operations and collective adapters so that it runs on host and
// CUDA devices alike.
//
// P ranks are arranged as q = P/c process rows × c replicas. Process row i
// holds block row i of Â, of Âᵀ (for the backward pass) and of every
// activation, replicated on its c ranks; W is replicated everywhere. Rank
// (i, j) computes the part of (ÂH)_i = Σ_k Â_ik H_k over the block columns k
// assigned to replica j (grid.Block(q, c, j)): one broadcast stage per k,
// within process column j, from the rank of process row k. The process row
// then all-reduces its partial sums. CAGNET requires c² | P so that every
// replica takes exactly P/c² stages; this package accepts any c | P and
// splits the q block columns as evenly as grid.Block does (some replicas
// get one stage more, or none when c > q), which is the generalisation the
// (6,3) and (8,4) cases exercise.
//
// Backward (§V-B): dZ_i = ∂L/∂Z_i (ReLU-masked for hidden layers),
// dW = Σ_i (ÂH)_iᵀ dZ_i (an all-reduce over the process column, so every
// replica holds the same dW), and ∂L/∂H_i = Σ_k (Âᵀ)_ik (dZ Wᵀ)_k with the
// same staged broadcasts over the stored Âᵀ.
//
// A SAGE layer (gcn.SAGELayer) aggregates with D^-1 A (gcn.MeanAdjacency
// of the given Â) and adds its input's own block row times W_self, which
// every rank holds; backward, dW_self = H_iᵀ dZ_i joins dW's all-reduce
// over the process column and dZ W_selfᵀ is added to ∂L/∂H_i.
//
// A GAT layer (gcn.GATLayer, gat.go) projects before it aggregates, so
// what stages carry differs from GCN's. Rank (i, j) computes Y_i = H_i·W,
// s_i = Y_i·a_src and t_i = Y_i·a_dst for its own rows (W and the
// attention vectors are replicated, no message). Its stages' blocks are
// kept merged, [Â_ik0 | … | Â_ik1−1] (gatBlock, only the pattern is read),
// with their transpose and its entry positions (spmm.TransposePerm). The
// stages broadcast t_k (float32) and Y_k (bfloat16 with Options.BF16)
// over the process column into one contiguous buffer of the stages' rows;
// the scores of block row i's entries need only s_i and those t, so each
// rank scores its share of the rows' entries, and the softmax's row
// maxima and sums are all-reduced over the process row (a rank holds
// whole rows of H but, with c > 1, only its replica's block columns of
// Â). α ⊛ Y over the merged block (SpMMHeads) gives partial rows,
// all-reduced over the process row like GCN's (ÂH)_i. Backward: Y's
// blocks are broadcast again in the same stages (not kept: the stage
// buffers stay one per width, as GCN's); dα = dO_i·Y_kᵀ on the entries,
// the softmax's row dot and ds are partial over the replica's columns and
// all-reduced over the process row. dY = αᵀ·dO and dt are column sums
// over every process row's rows: each rank computes them for its stages'
// columns from its own rows (over the transpose) and the process column
// all-reduces them (collectives has no Reduce; the result is needed by
// one rank per block row, the replica that multiplies the block row's own
// stage, which then broadcasts dY_i and dt_i over the process row in
// float32, so that every replica holds the same gradient). dW, d(a_src)
// and d(a_dst) are all-reduced over the process column as GCN's dW.
// Attention dropout keys α of entry (i, j) by the original ids of i and
// j, so every grid drops what the serial reference drops.
//
// With Options.BF16 the broadcasts and the process row's all-reduce of
// the partial sums travel as bfloat16 (ibcastBF16: packed halfwords two to
// a float32 word); the loss and weight gradients stay float32/float64.
// On a mixed-precision device (device.WithPrecision bf16; mixed.go) the GCN and SAGE layers keep
// their tape and aggregation operands in bfloat16 and broadcast them so,
// with the bits of a device that rounds every operand where its product
// reads it.
//
// Scope: GCN, SAGE and GAT layers (dropout included) without input projection,
// output head, norm or residual; no or single vertex permutation (double
// does not apply: one vertex order serves every layer); data-parallel
// replicas only in mini-batch training (MiniBatch, below: full-graph
// training has none, as in 3D); stage k+1's broadcast
// overlaps stage k's SpMM (device.IBcast). New rejects the rest with an
// error. Buffers (tape, gradients, stage buffers, bf16 staging) are
// allocated on first use and reused by later steps. NewFromSource reads
// from a gcn.Source (a graph in memory or a prepared dataset) only what
// the rank keeps: Â_ik for its stages k, Â_ki for Âᵀ, and its block row
// of features, labels and masks (New wraps a whole graph in a Source).
// The loss is computed on the host from the downloaded logits; the
// optimizer runs on the host in float64 (gcn.Optimizer.Update) and stores
// weights and moments rounded to float32 as the 3D model does, so that a
// checkpoint (package checkpoint's format, written by jobs) holds them
// exactly and a resumed run continues bit for bit (keep.go).
//
// Mini-batches with Gd replicas (MiniBatch, batch.go): each replica of P
// ranks draws ScaleGNN's uniform sample from (seed, replica, step) as 4D's
// gcn.BatchBuilder does, so both train the same batches; every rank cuts
// its batch blocks out of its stages' full blocks with sampler.Extractor
// (the one rescaling rule, by 1/p off the diagonal) without a message.
// Block row i of a batch is the sample's members of the full block row i,
// so block rows are uneven (Model.bounds); buffers are sized once for the
// full block row, which evaluation (the full graph's Accuracy) binds back.
// After the backward pass the weight gradients, one contiguous buffer, are
// summed over the replicas and divided by Gd (gcn's rule) before the
// optimizer step. With BatchOptions.Prefetch a batch's host half (the
// sample and the extracted blocks) is built in a goroutine while the step
// before trains (sampler.Prefetcher), its device half (uploads and the
// features' gather) at its step. Checkpoints are the full-graph model's
// (keep.go): the batches are a function of the step, so a resumed run
// continues exactly.
package cagnet
