//go:build !nompi

package mpi

// #include "shim.h"
import "C"

import "scalegnn/collectives"

var _ collectives.NodeSplitter = (*comm)(nil)

// SplitNode implements collectives.NodeSplitter with MPI_Comm_split_type
// (MPI_COMM_TYPE_SHARED): the ranks that can share memory, which MPI
// libraries take to be the ranks of one node, in the order of c.
func (c *comm) SplitNode() (collectives.Comm, error) {
	key, err := cSigned(c.rank, "rank")
	if err != nil {
		return nil, c.errorf("SplitNode", err)
	}
	var nc C.MPI_Comm
	if err := c.call("MPI_Comm_split_type", func() C.int {
		return C.MPI_Comm_split_type(c.c, C.sg_comm_type_shared(), key, C.sg_info_null(), &nc)
	}); err != nil {
		return nil, c.errorf("SplitNode", err)
	}
	sub, err := newComm(c.env, nc)
	if err != nil {
		return nil, c.errorf("SplitNode", err)
	}
	return sub, nil
}
