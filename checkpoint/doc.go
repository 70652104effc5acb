// Package checkpoint owns a training run's checkpoints: their layout on
// disk, writing one in parallel from every rank, verifying and reading one
// back onto any grid, and choosing the newest good one.
//
// A checkpoint is a directory ckpt-SSSSSSSS (S the optimizer steps taken)
// holding, for every parameter, NAME.npy (the weights), NAME.m.npy and
// NAME.v.npy (the optimizer moments) as Rows × Cols float32 arrays in
// global coordinates, which numpy reads directly; config.toml, the job as
// it ran; and manifest.json, written last, with the counters, the dataset
// fingerprint, the model shape and the SHA-256 of every other file.
//
// Every rank that is the writer of a block (one replica of each) writes it
// straight into the file at its offsets: nothing is gathered. The files
// are written into a temporary directory, synced, and the directory is
// renamed into place, so a checkpoint either exists whole or not at all;
// one whose files do not match their checksums is refused, and Latest
// skips it. The ranks must share the file system that holds the
// checkpoints (a cluster's parallel file system, or one machine's disk).
package checkpoint
