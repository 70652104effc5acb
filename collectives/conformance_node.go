package collectives

// checkNode checks SplitNode where world implements NodeSplitter: the node
// communicators partition the world (every rank's node holds exactly the
// ranks that name the same lowest member), each in world order, and a
// collective runs on them.
func checkNode(k *checker, world Comm) error {
	ns, ok := world.(NodeSplitter)
	if !ok {
		return nil
	}
	node, err := ns.SplitNode()
	if err != nil {
		return err
	}
	if node == nil || node.Size() < 1 || node.Size() > world.Size() {
		k.failf("SplitNode: got %v, want a communicator of 1 to %d ranks", node, world.Size())
		return nil
	}
	members := make([]float32, node.Size())
	if err := node.AllGatherF32(members, []float32{float32(k.worldRank)}); err != nil {
		return err
	}
	for i := 1; i < len(members); i++ {
		if members[i] <= members[i-1] {
			k.failf("SplitNode: members %v are not in world order", members)
			break
		}
	}
	if int(members[node.Rank()]) != k.worldRank {
		k.failf("SplitNode: Rank() = %d but member %d is world rank %v", node.Rank(), node.Rank(), members[node.Rank()])
	}
	// Every rank counts itself under its node's lowest member; the count
	// must be the node's size on every rank, or the nodes overlap or lack
	// ranks.
	leader := int(members[0])
	counts := make([]int64, world.Size())
	counts[leader] = 1
	if err := world.AllReduceI64(counts, Sum); err != nil {
		return err
	}
	if counts[leader] != int64(node.Size()) {
		k.failf("SplitNode: %d ranks name world rank %d as their node's first, but the node has %d", counts[leader], leader, node.Size())
	}
	return nil
}
