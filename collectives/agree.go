package collectives

import "errors"

// ErrOtherRank is what AgreeError returns on the ranks that did not have
// the error: the failure is another rank's, which reports it.
var ErrOtherRank = errors.New("failed on another rank")

// AgreeError tells every rank of c whether any rank failed at a step they
// all take together (writing their blocks of a file, say), with one
// all-reduce of one integer: a rank that had an error returns it, every
// other rank returns ErrOtherRank, and all return nil when none failed.
// So no rank goes on to the next collective alone.
func AgreeError(c Comm, err error) error {
	flag := []int64{0}
	if err != nil {
		flag[0] = 1
	}
	if rerr := c.AllReduceI64(flag, Sum); rerr != nil {
		return rerr
	}
	switch {
	case err != nil:
		return err
	case flag[0] != 0:
		return ErrOtherRank
	}
	return nil
}
