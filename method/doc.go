// Package method names the ways scalegnn trains: one type, Method, for the
// job file (train.mode with train.algorithm), the performance model's rows
// (Algorithm), grid.auto, summary.json and checkpoints. Package jobs
// registers one implementation per Method; docs/architecture.md shows how
// a new one is added.
package method
