// Package alloctest counts the heap allocations of code that runs on
// several goroutines in lockstep, such as the ranks of an in-process job
// (collectives.RunLocal), for the tests that want a steady-state step to
// allocate nothing on every rank. testing.AllocsPerRun cannot: it runs
// its function on one goroutine, and it counts the whole process anyway.
//
// Every goroutine calls the same Meter methods in the same order:
//
//	warm up; m.GC(); warm up again; m.Start(); run k times; m.Stop()
//
// and m.Mallocs()/k is then the allocations of one run over all
// goroutines. The collection and the second warm-up matter: a collection
// empties the runtime's central pools (the sudogs a blocked goroutine
// takes), the runs after it refill them, and then no collection starts
// inside the window unless the runs allocate.
package alloctest
