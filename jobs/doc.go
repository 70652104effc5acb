// Package jobs describes what a scalegnn run does: the job file (TOML) that
// configures it, the per-epoch metrics file it writes, and its logger.
//
// A job file is read with LoadConfig, which fills defaults for absent keys and
// validates every value before any work starts, so a typo or an out-of-range
// value is reported on one line that names the file, the key, the value and
// what was expected. docs/jobfile.md lists every key. The file is decoded by
// internal/tomlx (the strictness every configuration file shares); the
// options are the owning packages' types (permute.Scheme, gcn.Mode,
// gcn.Norm, collectives.DType), and [dataset.sbm] and [dataset.rmat] are
// package dataset's generator configs, which dataset validates.
//
// Setup builds a rank's job the same way for every dataset source: a
// gcn.Source (a graph held in memory, or a prepared dataset read shard by
// shard), the model configuration from its sizes, the shards, then the
// model with its run-time options.
//
// Metrics are written as JSON lines, one object per epoch, by a
// MetricsWriter; ReadMetrics reads them back.
//
// docs/architecture.md shows how this package fits with the others.
package jobs
