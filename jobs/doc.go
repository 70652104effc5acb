// Package jobs runs a training job: setup (dataset source → this rank's
// part → the training method), the one epoch loop that drives every
// method, checkpoints and -resume, and the run's log lines, metrics file
// and summary.json (whose formats package record owns).
//
// A training method is a Method (method.go): a step, an evaluation, the
// step's time split and byte counters, the state a checkpoint keeps and
// restores, and what scalegnn predict runs. Each is registered once, in
// registry.go, with its setup; its key checks are jobfile's, its
// predictions perfmodel's. The loop (loop.go, with runstate.go and
// stop.go) owns the evaluation rule, the watchdog stages, signals,
// checkpoints, divergence, the target accuracy and patience for all of
// them; aside.go records in summary.json, from other goroutines, what
// cannot wait for the loop (the first signal, the watchdog's stall), and
// outdir.go the output directory's lock and what it refuses.
//
// docs/architecture.md shows how this package fits with the others.
package jobs
