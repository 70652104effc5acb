package collectives

import (
	"errors"
	"fmt"
	"strings"
)

// Conformance checks that world implements Comm correctly. It is
// collective: every rank of world must call it. It exercises every method
// (Split included, into uneven and nested groups, with ties and an
// undefined color; empty buffers; odd sizes; Sum, Max and Min on float32,
// float64 and int64; a nonblocking all-reduce overlapped with blocking
// collectives on another communicator; alltoallv with rank-dependent
// counts including zeros; input and output buffers that overlap; the byte
// counters) on data derived from the ranks
// by formulas, and compares every result with the value the formula gives.
// All data are small integers, exact in every element type, so the check
// does not depend on the order in which the transport reduces.
//
// Every rank makes the same sequence of calls whatever the results, so a
// wrong result does not desynchronise the ranks: mismatches are collected,
// and at the end the ranks agree with one all-reduce on whether any rank
// saw one. Conformance then returns, on every rank, an error wrapping
// ErrMismatch: the first mismatch this rank saw (which op on which
// communicator, the index, what it got and what it wanted) or, if this rank
// saw none, how many ranks did. An error returned by a method ends the
// check at once on that rank (and is returned, not wrapping ErrMismatch);
// the other ranks may then block, as they would in any program, until the
// transport (or Local's abort) releases them.
//
// Abort is not called. Conformance needs no more than one rank and leaves
// no communicator behind that the caller must free.
func Conformance(world Comm) error {
	k := &checker{worldRank: world.Rank()}
	steps := []struct {
		name string
		run  func(k *checker, world Comm) error
	}{
		{"basics", checkBasics},
		{"world collectives", func(k *checker, world Comm) error { return checkSuite(k, world, "world") }},
		{"split", checkSplit},
		{"node", checkNode},
		{"nonblocking", checkNonblocking},
		{"counters", checkCounters},
	}
	for _, s := range steps {
		if err := s.run(k, world); err != nil {
			return fmt.Errorf("collectives conformance: world rank %d: %s: %w", k.worldRank, s.name, err)
		}
	}
	failed := []int64{0}
	if k.first != nil {
		failed[0] = 1
	}
	if err := world.AllReduceI64(failed, Sum); err != nil {
		return fmt.Errorf("collectives conformance: world rank %d: agreeing on the result: %w", k.worldRank, err)
	}
	switch {
	case k.first != nil:
		return &mismatchError{fmt.Sprintf("collectives conformance: world rank %d: %v (%d mismatches on this rank; %d of %d ranks saw mismatches)",
			k.worldRank, k.first, k.count, failed[0], world.Size())}
	case failed[0] != 0:
		return &mismatchError{fmt.Sprintf("collectives conformance: world rank %d: %d of %d ranks saw mismatches (none on this rank)",
			k.worldRank, failed[0], world.Size())}
	}
	return nil
}

// ErrMismatch is wrapped (test with errors.Is) by the error that
// Conformance returns, on every rank, when some rank saw a wrong result.
// Any other error that Conformance returns came from a method of the Comm
// and stopped only the rank that got it; under MPI, that rank should abort
// the job.
var ErrMismatch = errors.New("collectives: conformance mismatch")

// mismatchError is a conformance failure that every rank agreed on.
type mismatchError struct{ msg string }

func (e *mismatchError) Error() string        { return e.msg }
func (e *mismatchError) Is(target error) bool { return target == ErrMismatch }

// checker collects the mismatches one rank sees.
type checker struct {
	worldRank int
	first     error
	count     int
}

// failf records a mismatch.
func (k *checker) failf(format string, args ...any) {
	k.count++
	if k.first == nil {
		k.first = fmt.Errorf(format, args...)
	}
}

// ok reports whether no mismatch has been recorded yet.
func (k *checker) ok() bool { return k.first == nil }

// equal records a mismatch if got differs from want: the first differing
// index, or the lengths.
func equal[T comparable](k *checker, what string, got, want []T) {
	if len(got) != len(want) {
		k.failf("%s: got %d elements, want %d", what, len(got), len(want))
		return
	}
	for i := range got {
		if got[i] != want[i] {
			k.failf("%s: index %d: got %v, want %v", what, i, got[i], want[i])
			return
		}
	}
}

// call names a collective call in a mismatch message.
func call(name string, on string, args ...any) string {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = fmt.Sprint(a)
	}
	return fmt.Sprintf("%s(%s) on %s", name, strings.Join(s, ", "), on)
}

// allAgree all-reduces ok over c and reports whether it held on every
// rank. It keeps the ranks from going on with a communicator that some of
// them did not get.
func allAgree(c Comm, ok bool) (bool, error) {
	v := []int64{0}
	if ok {
		v[0] = 1
	}
	if err := c.AllReduceI64(v, Min); err != nil {
		return false, err
	}
	return v[0] == 1, nil
}
