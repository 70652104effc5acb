// Package par owns the one rule for work split over goroutines: a panic
// in a worker goroutine never ends the process on its own. The worker
// recovers it, the caller waits for every worker, and then panics on its
// own goroutine with the first value caught, so that the caller's handler
// (withMPI's recover in package main) ends the job with one line instead
// of Go's trace of every goroutine.
//
// Group runs functions on new goroutines; First is the recovery alone,
// for pools whose workers live across jobs (package device).
package par
