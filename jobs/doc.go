// Package jobs describes what a scalegnn run does: the job file (TOML) that
// configures it, the per-epoch metrics file it writes, and its logger.
//
// A job file is read with LoadConfig, which fills defaults for absent keys and
// validates every value before any work starts, so a typo or an out-of-range
// value is reported on one line that names the file, the key, the value and
// what was expected. docs/jobfile.md lists every key.
//
// Metrics are written as JSON lines, one object per epoch, by a
// MetricsWriter; ReadMetrics reads them back.
package jobs
