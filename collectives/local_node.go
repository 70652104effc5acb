package collectives

var _ NodeSplitter = (*localComm)(nil)

// SplitNode implements NodeSplitter: the ranks of a Local world are
// goroutines of one process, so every rank of the group shares the node.
func (c *localComm) SplitNode() (Comm, error) { return c.Split(0, c.rank) }
