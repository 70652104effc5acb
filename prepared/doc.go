// Package prepared owns scalegnn's prepared datasets: a graph written once
// to disk, already normalised and permuted, as a grid of blocks that every
// rank of a training job reads only its own part of (Plexus §5.4, "parallel
// data loading"). It has no MPI: a Dataset is a gcn.Source, and
// gcn.NewShards over it gives a rank exactly the shards it would cut from
// the whole graph in memory (same values, bit for bit).
//
// # Layout
//
// A prepared dataset is a directory of NumPy .npy files and meta.toml (see
// Meta), the last file written. With N vertices, F features and S blocks
// (positions cut as grid.Block(N, S, i)):
//
//	order0.npy            int32 (N,)   p1: the original vertex at each position of order 0
//	order1.npy            int32 (N,)   p2, only with double permutation (otherwise p2 = p1)
//	labels.npy            int32 (N,)   class of each original vertex, -1 unlabeled
//	train.npy, val.npy, test.npy  bool (N,)  split masks, original vertex order
//	features/rI.npy       float32 (rows of block I, F)  features of positions in block I of order 1 (p2);
//	                      with Options.FeatureDType = "bf16", uint16 '<u2' holding bfloat16 bits
//	                      (meta.toml: feature_dtype = "bf16"), widened exactly as they are read
//	adj0/rIcJ.indptr.npy  int64 (rows+1,)  block (I, J) of Â[p1][:, p2] as CSR, columns local to block J
//	adj0/rIcJ.indices.npy int32 (nnz,)
//	adj0/rIcJ.data.npy    float32 (nnz,)
//	adj1/...              Â[p2][:, p1], only with double permutation of a directed or weighted graph
//
// Â = D^-1/2 (A + I) D^-1/2 is computed exactly as dataset.NormalizeGCN
// computes it. For a symmetric unweighted graph, Â[p2][:, p1] is the
// transpose of Â[p1][:, p2] bit for bit, so it is not stored: a rank reads
// the transposed blocks and transposes them. Features are stored raw;
// row normalisation (the job's dataset.normalize_features) is applied as
// they are read.
//
// # Preparing
//
// Prepare streams an Input (a graph in memory, an edge list with .npy
// arrays, the OGB raw CSV layout, or the R-MAT generator) into the
// directory. It buckets the edges into one temporary file per row block
// ("strip"), then for each strip sorts and deduplicates the entries to sum
// the degrees, and then, with all degrees known, sorts each strip again by
// permuted column, adds the diagonal, normalises and writes the strip's S
// blocks. Features are bucketed the same way. Memory is bounded by
//
//	O(N) vertex arrays (about 40 bytes per vertex: p1, p2, their inverses,
//	  degrees, labels, masks)
//	+ one strip of edges (16 bytes per nonzero of the largest strip, about
//	  2·nnz/S with a balancing permutation)
//	+ one block of features (4·F·N/S bytes, with either feature dtype),
//
// not by the graph. Temporary files take about 8 bytes per directed edge
// (12 with weights) plus the features. The dataset is written into a hidden
// sibling directory (.NAME.partial-*) and renamed into place when complete;
// an existing directory is never replaced unless Options.Force is set and
// it is itself a prepared dataset. A partial directory names its owner
// process, so the next Prepare of the same output removes those of
// prepares that were killed (partial.go).
//
// # Loading
//
// Open reads meta.toml and the orders. AdjBlock, FeatureBlock and Labels
// read the blocks that overlap the requested ranges, one at a time, and
// verify each file's size (when it is opened), its .npy header against the
// expected dtype and shape, its SHA-256 against meta.toml (as it streams:
// each file is read once, hashed on its way into memory, and nothing read
// is used before the digest matches), and the CSR structure; any mismatch
// is an error naming the file. Arrays of the stored dtypes go straight
// from the file into their destination (npy's bulk reads).
//
// A Dataset is a gcn.SourceInto: AdjBlockNNZ and the feature block's shape
// size a rank's shards, and AdjBlockInto and FeatureBlockInto fill arrays
// the caller allocated (the host slices of gcn.Shards today, a device
// arena's buffers later). Blocks pass through two reused block buffers
// into their final place (one read while the other is copied), so a
// rank's peak memory is its shards plus two blocks (plus the O(N) orders,
// labels and masks). A mirrored block (Â[p2][:, p1]
// of a symmetric graph, stored as Â[p1][:, p2]) is read as the transpose
// gcn.NewShards also needs and transposed once.
//
// docs/architecture.md shows how this package fits with the others.
package prepared
