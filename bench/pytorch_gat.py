#!/usr/bin/env python3
"""Times the GAT of bench/rmat16-gat.toml in PyTorch on the CPU, for the
side-by-side comparison of bench/vs-pytorch-gat.sh (issue 26).

It reads a prepared dataset written with `scalegnn prepare -blocks 1
-permute none` through bench/prepared_load.py (only the pattern of the
stored Â = D^-1/2 (A + I) D^-1/2 is used: the neighbourhoods of A + I,
self loops included) and builds the model scalegnn builds (gcn.GATLayer):
per layer Y = H·W split into K heads of F' columns, s = Y·a_src and
t = Y·a_dst per head, e_ij = LeakyReLU_0.2(s_i + t_j) over the entries
(i, j), α = the softmax of e over each row with the row maximum
subtracted, out_i = Σ_j α_ij Y[j] + b; the hidden layers concatenate the
heads and apply ELU, the last layer averages its heads. No dropout,
softmax cross-entropy over the training vertices, Adam. It prints one JSON
line with the mean time of an epoch (forward, backward and Adam step)
over the timed epochs, after the warm-up epochs.

Two ways a PyTorch user writes the edge operations, both plain autograd:

  scatter  index_select of s, t and Y's rows per edge, the row maxima by
           scatter_reduce("amax"), the sums and the aggregation by
           index_add_ (the messages, nnz × K × F', materialised), as
           PyG's GATConv does;
  sparse   the scores as a hybrid sparse COO tensor (N × N × K),
           torch.sparse.softmax over each row, then per head one
           torch.sparse.mm of a COO matrix holding that head's α.
           Autograd's gradient of torch.sparse.mm for its sparse operand
           (1.13) forms the dense N × N product dO·Yᵀ before masking it
           to the pattern: 8.4× slower than scatter at R-MAT scale 13 on
           the development machine, and N² floats (16 GiB at scale 16)
           do not fit, so it is refused above N = 16384.

-impl best runs scatter, the faster; -impl both times each and reports
the faster, with both times in the JSON line.

    python3 bench/pytorch_gat.py DIR [-impl best|scatter|sparse|both] [-heads 8] [-hidden 8]
        [-output-heads 1] [-epochs 10] [-warmup 2] [-threads 2] [-raw]
"""
import argparse
import json
import time

import warnings

import numpy as np
import torch
import torch.nn.functional as F

import prepared_load

# scatter_reduce is "beta" in 1.13 and says so on every call.
warnings.filterwarnings("ignore", message="scatter_reduce")

SLOPE = 0.2
# The faster variant (see above; docs/results.md, "GAT against PyTorch").
BEST = "scatter"
# The largest graph the sparse variant is run on: its backward's dense
# N × N product is 1 GiB there.
SPARSE_MAX_N = 16384


class Graph:
    def __init__(self, d, normalize_features):
        indptr, indices, _, x, labels, train = prepared_load.load(d, normalize_features)
        self.n = len(indptr) - 1
        self.row = torch.from_numpy(prepared_load.coo_rows(indptr))
        self.col = torch.from_numpy(indices.astype(np.int64))
        self.x = torch.from_numpy(x)
        idx = torch.from_numpy(np.flatnonzero(train))
        self.train, self.labels = idx, torch.from_numpy(labels)[idx]
        self.classes = int(labels.max()) + 1
        # The CSR's entries are sorted by row, then column: the indices of
        # a coalesced COO tensor already, so nothing is sorted per epoch.
        self.idx = torch.stack([self.row, self.col])
        self.nnz = self.row.numel()


def scatter_attention(g, y, s, t, heads):
    """out (N × K × F') of one GAT layer with index_select/scatter ops."""
    n, f = g.n, y.shape[1] // heads
    e = F.leaky_relu(s.index_select(0, g.row) + t.index_select(0, g.col), SLOPE)  # nnz × K
    with torch.no_grad():
        mx = torch.full((n, heads), float("-inf")).scatter_reduce(
            0, g.row.unsqueeze(1).expand(-1, heads), e, reduce="amax", include_self=True)
    p = torch.exp(e - mx.index_select(0, g.row))
    sums = torch.zeros(n, heads).index_add_(0, g.row, p)
    alpha = p / sums.index_select(0, g.row)
    msg = y.view(n, heads, f).index_select(0, g.col) * alpha.unsqueeze(-1)  # nnz × K × F'
    return torch.zeros(n, heads, f).index_add_(0, g.row, msg)


def sparse_attention(g, y, s, t, heads):
    """The same with torch.sparse.softmax and one torch.sparse.mm per head."""
    n, f = g.n, y.shape[1] // heads
    e = F.leaky_relu(s.index_select(0, g.row) + t.index_select(0, g.col), SLOPE)
    scores = torch.sparse_coo_tensor(g.idx, e, (n, n, heads)).coalesce()
    alpha = torch.sparse.softmax(scores, dim=1).values()  # row max subtracted inside
    outs = []
    for k in range(heads):
        a = torch.sparse_coo_tensor(g.idx, alpha[:, k], (n, n)).coalesce()
        outs.append(torch.sparse.mm(a, y[:, k * f:(k + 1) * f]))
    return torch.stack(outs, dim=1)


ATTENTION = {"scatter": scatter_attention, "sparse": sparse_attention}


def glorot(rows, cols):
    # The shape as scalegnn's Glorot uniform draws it (gcn/initial.go).
    b = (6.0 / (rows + cols)) ** 0.5
    return torch.nn.Parameter(torch.empty(rows, cols).uniform_(-b, b))


class GAT:
    def __init__(self, g, layers, hidden, heads, output_heads):
        self.g = g
        self.heads = [heads] * (layers - 1) + [output_heads]
        self.outs = [hidden] * (layers - 1) + [g.classes]
        self.params = []
        width = g.x.shape[1]
        for k, f in zip(self.heads, self.outs):
            w, a_src, a_dst = glorot(width, k * f), glorot(k, f), glorot(k, f)
            b = torch.nn.Parameter(torch.zeros(k * f))
            self.params.append((w, a_src, a_dst, b))
            width = k * f

    def parameters(self):
        return [p for ps in self.params for p in ps]

    def forward(self, attention):
        h = self.g.x
        last = len(self.params) - 1
        for l, ((w, a_src, a_dst, b), k) in enumerate(zip(self.params, self.heads)):
            y = h @ w
            yk = y.view(-1, k, w.shape[1] // k)
            s, t = (yk * a_src).sum(-1), (yk * a_dst).sum(-1)  # N × K each
            o = attention(self.g, y, s, t, k) + b.view(k, -1)
            h = o.mean(1) if l == last else F.elu(o.reshape(o.shape[0], -1))
        return h


def run(g, model, attention, epochs, warmup):
    opt = torch.optim.Adam(model.parameters(), lr=0.005)

    def epoch():
        opt.zero_grad(set_to_none=True)
        logits = model.forward(attention)
        loss = F.cross_entropy(logits.index_select(0, g.train), g.labels)
        loss.backward()
        opt.step()
        return float(loss)

    for _ in range(warmup):
        epoch()
    t0 = time.perf_counter()
    for _ in range(epochs):
        loss = epoch()
    return (time.perf_counter() - t0) / epochs, loss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("-impl", default="best", choices=("best", "both") + tuple(ATTENTION))
    ap.add_argument("-layers", type=int, default=2)
    ap.add_argument("-hidden", type=int, default=8)
    ap.add_argument("-heads", type=int, default=8)
    ap.add_argument("-output-heads", type=int, default=1)
    ap.add_argument("-epochs", type=int, default=10)
    ap.add_argument("-warmup", type=int, default=2)
    ap.add_argument("-threads", type=int, default=2)
    ap.add_argument("-raw", action="store_true", help="features as stored (the job's normalize_features = false)")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    g = Graph(a.dir, not a.raw)
    impls = {"best": [BEST], "both": list(ATTENTION)}.get(a.impl, [a.impl])
    if "sparse" in impls and g.n > SPARSE_MAX_N:
        if a.impl == "sparse":
            ap.error("-impl sparse: %d vertices; its backward needs a dense %d × %d matrix (at most %d vertices)"
                     % (g.n, g.n, g.n, SPARSE_MAX_N))
        impls.remove("sparse")
    res = {}
    for impl in impls:
        torch.manual_seed(1)
        model = GAT(g, a.layers, a.hidden, a.heads, a.output_heads)
        res[impl] = run(g, model, ATTENTION[impl], a.epochs, a.warmup)
    best = min(res, key=lambda k: res[k][0])
    out = {"impl": "pytorch %s %s" % (torch.__version__, best), "threads": a.threads, "n": g.n, "nnz": g.nnz,
           "epoch_s": res[best][0], "loss": res[best][1]}
    for impl, (s, _) in res.items():
        out["epoch_s_" + impl] = s
    print(json.dumps(out))


if __name__ == "__main__":
    main()
