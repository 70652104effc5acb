package gcn

import (
	"scalegnn/device"
	"scalegnn/grid"
)

// bound is what the model derives from one Shards: the per-layer local
// dimensions, the adjacency on the device, the labels and split masks as
// device buffers, the residual's row maps, and the arena of the passes
// over these shards. The model keeps one for the full graph and one that
// every mini-batch rebinds, reusing its storage.
type bound struct {
	sh     *Shards
	layers []layerDims
	// rowMaps[k] maps positions of vertex order k to order 1-k, for the
	// redistributions of the residual and of SAGE's self term (nil when
	// the orders agree).
	rowMaps [2][]int32
	csrs    []*boundCSR // one per distinct adjacency shard
	labels  device.Buffer[int32]
	masks   [3]device.Buffer[uint8] // train, val, test
	maskB   []uint8                 // host storage of the masks as bytes
	// The inputs the passes read, shared with the device once per bind
	// (a GPU copies them into these reused buffers): the features, each
	// layer's and the head's input vertex ids (dropout's keys), and the
	// residual's inverse row maps.
	x         device.Buffer[float32]
	xb        device.Buffer[uint16] // the features in bfloat16, instead of x (Shards.XB)
	verts     []device.Buffer[int32]
	headVerts device.Buffer[int32]
	inv       [2]device.Buffer[int32]
	ar        *arena
	// GAT layers: each layer's output vertex ids (attention dropout's row
	// keys), per-entry storage, and the transpose's entry positions (the
	// shards' perm) on the device; dalpha is the backward pass's per-entry
	// scratch, shared by the layers.
	outVerts []device.Buffer[int32]
	gat      []gatEdges
	perms    []device.Buffer[int32]
	dalpha   device.Buffer[float32]
	// reserved says ar has been sized from the arena plan (forward's first
	// pass on this binding; a rebinding keeps it).
	reserved bool
}

// boundCSR is one adjacency shard on the device, and its transpose when
// the backward pass needs it.
type boundCSR struct {
	src   *adjShard
	a, at device.CSR
	perm  device.Buffer[int32] // GAT: src.perm
}

// bind points b at sh: the device adjacency is refilled in place (host
// devices share the shards' arrays) and the masks converted into reused
// storage, so rebinding a mini-batch allocates nothing in a steady state.
func (m *Model) bind(b *bound, sh *Shards) {
	b.sh = sh
	b.layers = b.layers[:0]
	n := 0
	for l := range m.specs {
		d := m.dims(sh, l)
		shard := sh.adj[sh.shardKey(l)]
		var c *boundCSR
		for _, have := range b.csrs[:n] {
			if have.src == shard {
				c = have
			}
		}
		if c == nil {
			if n == len(b.csrs) {
				b.csrs = append(b.csrs, new(boundCSR))
			}
			c = b.csrs[n]
			n++
			c.src = shard
			m.dev.UploadCSRInto(&c.a, shard.a)
			if shard.at != nil && shard.at != shard.a {
				m.dev.UploadCSRInto(&c.at, shard.at)
			}
			if shard.perm != nil {
				device.ShareInto(m.dev, &c.perm, shard.perm)
			}
		}
		d.a, d.at = &c.a, &c.at
		if shard.at == shard.a {
			d.at = &c.a // a diagonal GCN block is its own transpose (NewShardsWith)
		}
		if m.Cfg.Layer == GATLayer {
			for len(b.perms) <= l {
				b.perms = append(b.perms, device.Buffer[int32]{})
			}
			b.perms[l] = c.perm
		}
		b.layers = append(b.layers, d)
	}
	for _, c := range b.csrs[n:] {
		c.src = nil
	}
	m.checkFeatures(sh)
	if sh.XB != nil {
		device.ShareInto(m.dev, &b.xb, sh.XB)
	} else {
		device.ShareInto(m.dev, &b.x, sh.X)
	}
	for len(b.verts) < len(m.specs) {
		b.verts = append(b.verts, device.Buffer[int32]{})
	}
	for l := range m.specs {
		d := &b.layers[l]
		device.ShareInto(m.dev, &b.verts[l], sh.Orders.Order[grid.InputOrder(l)][d.pr0:d.pr1])
	}
	if m.Cfg.OutputHead {
		pa, _, _ := grid.Rotation(m.Cfg.Layers)
		r0, r1 := sh.rows(m.g, grid.OutputOrder(m.Cfg.Layers-1), pa)
		device.ShareInto(m.dev, &b.headVerts, sh.Orders.Order[grid.OutputOrder(m.Cfg.Layers-1)][r0:r1])
	}
	device.ShareInto(m.dev, &b.labels, sh.Labels)
	rows := len(sh.Labels)
	if cap(b.maskB) < 3*rows {
		b.maskB = make([]uint8, 3*rows)
	}
	b.maskB = b.maskB[:3*rows]
	for k, mask := range [3][]bool{sh.Train, sh.Val, sh.Test} {
		dst := b.maskB[k*rows : (k+1)*rows]
		for i, v := range mask {
			dst[i] = 0
			if v {
				dst[i] = 1
			}
		}
		device.ShareInto(m.dev, &b.masks[k], dst)
	}
	if m.Cfg.Layer == GATLayer {
		m.bindGAT(b, sh)
	}
	if m.Cfg.Residual || m.Cfg.Layer == SAGELayer || m.Cfg.Layer == GATLayer {
		b.rowMaps = [2][]int32{sh.Orders.rowMap(b.rowMaps[0], 0, 1), sh.Orders.rowMap(b.rowMaps[1], 1, 0)}
		for k, rm := range b.rowMaps {
			if rm != nil {
				device.ShareInto(m.dev, &b.inv[k], rm)
			}
		}
	}
}

// dims of GCN layer l on this rank.
type layerDims struct {
	p, q, r      grid.Axis
	pr0, pr1     int // rows of the input (P-block of N)
	rr0, rr1     int // rows of the output (R-block of N)
	in0, in1     int // input columns (Q-block of the input width)
	out0, out1   int // output columns (P-block of the output width)
	nP, nR, dIn  int
	dOut         int
	a, at        *device.CSR // the layer's adjacency block and its transpose
	spec         layerSpec
	weight, norm *Param
	self         *Param // W_self of a SAGE layer
	// attSrc and attDst are a GAT layer's attention vectors, bias its
	// bias.
	attSrc, attDst, bias *Param
}

func (m *Model) dims(sh *Shards, l int) layerDims {
	var d layerDims
	d.spec = m.specs[l]
	d.p, d.q, d.r = grid.Rotation(l)
	d.pr0, d.pr1 = sh.rows(m.g, grid.InputOrder(l), d.p)
	d.rr0, d.rr1 = sh.rows(m.g, grid.OutputOrder(l), d.r)
	d.in0, d.in1 = m.g.Range(d.spec.in, d.q)
	d.out0, d.out1 = m.g.Range(d.spec.out, d.p)
	d.nP, d.nR = d.pr1-d.pr0, d.rr1-d.rr0
	d.dIn, d.dOut = d.in1-d.in0, d.out1-d.out0
	d.weight, d.norm, d.self = m.layerParams[l][0], m.layerParams[l][1], m.layerParams[l][2]
	d.attSrc, d.attDst, d.bias = m.layerParams[l][3], m.layerParams[l][4], m.layerParams[l][5]
	return d
}
