// Package watchdog owns the detection of a stalled job: a Watchdog per
// rank that knows the stage the rank is in (loading, "epoch 3 step 7", an
// evaluation, and inside it the collective it is blocked in, "all-reduce
// on the Y communicator") and when it last made progress (a step, a load
// or an evaluation completing), and that ends the whole job with one line
// naming the rank, the stage and the wait when no progress comes within
// its limit (runtime.stall_timeout, docs/jobfile.md).
//
// The collective stage comes from Comm, a collectives.Comm wrapper that
// labels every blocking call with its operation and the communicator's
// name; grid names the communicators it splits (grid.New), so wrapping the
// world before the grid is built labels them all. Limits, the policy that
// turns the progress history into the current limit, live in policy.go.
//
// A Watchdog is a value passed to what reports to it, never a global: a
// test runs one per rank of a collectives.Local world.
package watchdog
