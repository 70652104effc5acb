// Package record owns a run's records: the metrics file (one JSON line
// per epoch: EpochMetrics, MetricsWriter, ReadMetrics), summary.json
// (Result, its statuses, WriteSummary), the lock a live run holds on its
// directory (TakeLock, LockHolder, EndedAbnormally), and reading a
// finished or running run back from its directory (ReadRun). scalegnn compare, plot and
// perfmodel score and scripts/checkpreds read runs through it without
// importing training.
package record
