#!/usr/bin/env python3
"""Times full-graph GCN training epochs in PyTorch and PyG on one device, for
the GPU comparison of bench/vs-pyg.sh (scalegnn's goal: an epoch at most
0.8× PyG's GCNConv on the same GPU and graph).

It reads a prepared dataset written with `scalegnn prepare -blocks 1
-permute none` (bench/prepared_load.py), whose adjacency is already
Â = D^-1/2 (A + I) D^-1/2 exactly as scalegnn computes it, and row-normalises
the features as scalegnn does by default. Every implementation trains the
same model as the job: L graph convolutions relu(Â H W) (no ReLU after the
last), no bias, no dropout, mean softmax cross-entropy over the training
vertices, Adam (lr 0.01, weight decay 5e-4 added to the gradient: the job's
optimizer defaults, as scalegnn's "adam" does it). An epoch is forward, backward and the Adam step;
each is timed on its own between torch.cuda.synchronize() calls, after
warm-up epochs, and the median is reported.

Implementations (--impl, comma-separated; one JSON line each):

  torch-csr      torch.sparse.mm(Â, H) @ W with Â a torch.sparse_csr_tensor;
                 the backward product is left to autograd, which computes
                 Âᵀ·G as Â.t() (a CSC view of the same arrays, no copy) times
                 G, i.e. cuSPARSE's SpMM with the transposed operation.
  torch-csr-sym  the same, but the backward product is Â·G through a custom
                 autograd.Function (Â is symmetric), as scalegnn's and
                 bench/pytorch_gcn.py's backward do: shows what autograd's
                 transposed product costs.
  pyg            torch_geometric.nn.GCNConv on edge_index with the stored
                 Â values as edge_weight and normalize=False, add_self_loops=
                 False: the same Â, bit for bit. (normalize=True on the raw
                 edges would recompute the same D^-1/2 (A + I) D^-1/2 once
                 and cache it with cached=True, so its epochs do the same
                 work; the stored weights spare rebuilding the raw edges.)
                 Aggregation is PyG's gather/scatter message passing.
  pyg-sparse     GCNConv given the adjacency itself as adj_t (a torch_sparse
                 SparseTensor when torch_sparse is installed, otherwise a
                 torch.sparse_csr_tensor, which PyG 2.3+ accepts): one SpMM
                 per aggregation, PyG's fastest full-graph path.

GCNConv multiplies by W before aggregating (Â (H W)), scalegnn and torch-csr
after ((Â H) W): the same result, but PyG's last layer aggregates 32 columns
instead of 128, and its first layer needs the backward SpMM (for dW) that
the others skip. That is PyG's design, kept as it is.

spmm_s is the aggregation alone (forward and backward products of every
layer, at the widths the epoch uses), timed separately on random inputs.

    python3 bench/gpu_gcn.py DIR [--impl torch-csr,pyg,pyg-sparse] [--device cuda|cpu]
                             [--layers 3] [--hidden 128] [--epochs 20] [--warmup 5] [--threads N]
"""
import argparse
import json
import statistics
import sys
import time
import warnings

import numpy as np
import torch

import prepared_load

# torch's notices that CSR support is beta and that invariant checks are
# off (the arrays come from scalegnn, which checked them) say nothing here.
warnings.filterwarnings("ignore", message="Sparse (CSR tensor support|invariant checks)")

IMPLS = ("torch-csr", "torch-csr-sym", "pyg", "pyg-sparse")


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def timed(dev, fn):
    sync(dev)
    t = time.perf_counter()
    fn()
    sync(dev)
    return time.perf_counter() - t


class Graph:
    """The dataset on the device, in the forms the implementations need;
    each form is built once, on first use."""

    def __init__(self, d, dev, index_dtype, normalize_features):
        indptr, indices, data, x, labels, train = prepared_load.load(d, normalize_features)
        self.n, self.nnz, self.dev = len(indptr) - 1, len(indices), dev
        self.index_dtype = index_dtype
        self._np = (indptr, indices, data)
        self.x = torch.from_numpy(x).to(dev)
        # An index, not a boolean mask: a mask would make every epoch wait
        # for a device-to-host copy of its count.
        idx = torch.from_numpy(np.flatnonzero(train)).to(dev)
        self.train_idx, self.train_labels = idx, torch.from_numpy(labels).to(dev)[idx]
        self.classes = int(labels.max()) + 1
        self._csr = self._edges = None

    def csr(self):
        if self._csr is None:
            indptr, indices, data = self._np
            self._csr = torch.sparse_csr_tensor(torch.from_numpy(indptr).to(self.index_dtype),
                                                torch.from_numpy(indices).to(self.index_dtype),
                                                torch.from_numpy(data), size=(self.n, self.n)).to(self.dev)
        return self._csr

    def edges(self):
        """edge_index (2, nnz) int64 and edge_weight for PyG. PyG's default
        flow (source_to_target) sums messages x_j · w into vertex i for an
        edge (j, i), so the row of Â is the target: row 0 holds columns."""
        if self._edges is None:
            indptr, indices, data = self._np
            ei = np.stack([indices.astype(np.int64), prepared_load.coo_rows(indptr)])
            self._edges = torch.from_numpy(ei).to(self.dev), torch.from_numpy(data).to(self.dev)
        return self._edges

    def adj_t(self):
        """Â as PyG's adj_t (rows are targets, as in edges), and its kind."""
        try:
            import torch_sparse
        except ImportError:
            return self.csr(), "torch.sparse_csr_tensor"
        indptr, indices, data = self._np
        a = torch_sparse.SparseTensor(rowptr=torch.from_numpy(indptr), col=torch.from_numpy(indices.astype(np.int64)),
                                      value=torch.from_numpy(data), sparse_sizes=(self.n, self.n), is_sorted=True)
        return a.to(self.dev), "torch_sparse.SparseTensor"


def glorot(rows, cols, dev):
    return torch.nn.Parameter(((torch.rand(rows, cols) * 2 - 1) * (6.0 / (rows + cols)) ** 0.5).to(dev))


class SymSpMM(torch.autograd.Function):
    """Â·H whose backward is Â·G: Âᵀ = Â for a symmetric Â."""

    @staticmethod
    def forward(ctx, adj, h):
        ctx.adj = adj
        return torch.sparse.mm(adj, h)

    @staticmethod
    def backward(ctx, g):
        return None, torch.sparse.mm(ctx.adj, g.contiguous())


def build(impl, g, widths):
    """Returns (parameters, forward() -> logits, aggregate(h) -> Â·h as the
    model computes it with autograd, the aggregation widths (forward,
    backward), a description of the adjacency)."""
    dev, L = g.dev, len(widths) - 1
    if impl in ("torch-csr", "torch-csr-sym"):
        adj = g.csr()
        ws = [glorot(widths[i], widths[i + 1], dev) for i in range(L)]
        agg = (lambda h: torch.sparse.mm(adj, h)) if impl == "torch-csr" else (lambda h: SymSpMM.apply(adj, h))

        def forward():
            h = g.x
            for i, w in enumerate(ws):
                h = agg(h) @ w
                if i < L - 1:
                    h = torch.relu(h)
            return h
        # (Â H) W: aggregates the layer's input width; no backward product
        # in layer 0, whose input needs no gradient.
        return ws, forward, agg, (widths[:-1], widths[1:-1]), "torch.sparse_csr_tensor " + str(g.index_dtype)

    from torch_geometric.nn import GCNConv
    # cached only caches the normalisation, which normalize=False skips;
    # add_self_loops must be False with normalize=False (Â has them).
    convs = [GCNConv(widths[i], widths[i + 1], cached=True, normalize=False, add_self_loops=False, bias=False).to(dev)
             for i in range(L)]
    if impl == "pyg":
        ei, ew = g.edges()
        args, kind = (ei, ew), "edge_index int64 + edge_weight"
    else:
        adj_t, kind = g.adj_t()
        args = (adj_t,)

    def forward():
        h = g.x
        for i, c in enumerate(convs):
            h = c(h, *args)
            if i < L - 1:
                h = torch.relu(h)
        return h

    def agg(h):
        if impl == "pyg":
            return convs[0].propagate(args[0], x=h, edge_weight=args[1])
        return convs[0].propagate(args[0], x=h, edge_weight=None)
    # Â (H W): aggregates the layer's output width, forward and backward
    # (layer 0's backward product feeds dW).
    params = [p for c in convs for p in c.parameters()]
    return params, forward, agg, (widths[1:], widths[1:]), kind


def spmm_time(dev, agg, fwd_widths, bwd_widths, n, reps=5):
    """Seconds per epoch of the aggregation alone: a forward product at each
    width of fwd_widths and a backward product at each of bwd_widths,
    median of reps."""
    total = 0.0
    for w in fwd_widths:
        h = torch.rand(n, w, device=dev)
        agg(h)
        total += statistics.median(timed(dev, lambda: agg(h)) for _ in range(reps))
    for w in bwd_widths:
        h = torch.rand(n, w, device=dev, requires_grad=True)
        gr = torch.rand(n, w, device=dev)
        out = agg(h)  # the forward once; backward is timed alone

        def back():
            torch.autograd.backward(out, gr, retain_graph=True)
        back()
        total += statistics.median(timed(dev, back) for _ in range(reps))
        del out, h
    return total


def run(impl, g, a, dev):
    torch.manual_seed(1)
    widths = [g.x.shape[1]] + [a.hidden] * (a.layers - 1) + [g.classes]
    params, forward, agg, (fw, bw), kind = build(impl, g, widths)
    opt = torch.optim.Adam(params, lr=0.01, weight_decay=5e-4)

    def epoch():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(forward()[g.train_idx], g.train_labels)
        loss.backward()
        opt.step()
        return loss

    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    for _ in range(a.warmup):
        epoch()
    times = [timed(dev, epoch) for _ in range(a.epochs)]
    loss = float(epoch().detach())
    out = {"impl": impl, "epoch_s_median": statistics.median(times), "epoch_s_mean": statistics.mean(times),
           "epoch_s_min": min(times), "epochs": a.epochs, "warmup": a.warmup, "device": describe(dev, a.threads),
           "torch": torch.__version__, "adj": kind, "n": g.n, "nnz": g.nnz, "widths": widths, "loss": loss}
    if impl.startswith("pyg"):
        import torch_geometric
        out["pyg"] = torch_geometric.__version__
    if dev.type == "cuda":
        out["peak_mem_gib"] = torch.cuda.max_memory_allocated(dev) / 2**30
    del opt, params
    if not a.no_spmm:
        out["spmm_s"] = spmm_time(dev, agg, fw, bw, g.n)
    return out


def describe(dev, threads):
    if dev.type == "cuda":
        return torch.cuda.get_device_name(dev)
    return "cpu (%d threads)" % threads


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", help="prepared dataset (scalegnn prepare -blocks 1 -permute none)")
    ap.add_argument("--impl", default="torch-csr,pyg,pyg-sparse", help="comma-separated: " + ", ".join(IMPLS))
    ap.add_argument("--device", default="", help="cuda, cuda:N or cpu (default: cuda when torch sees a GPU)")
    ap.add_argument("--layers", type=int, default=3)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--epochs", type=int, default=20, help="timed epochs")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: torch's default)")
    ap.add_argument("--index-dtype", choices=("int64", "int32"), default="int64",
                    help="index dtype of the torch-csr adjacency (int32 halves the index traffic)")
    ap.add_argument("--raw-features", action="store_true",
                    help="skip the row normalisation (the job's dataset.normalize_features = false)")
    ap.add_argument("--no-spmm", action="store_true", help="skip the separate aggregation timing")
    a = ap.parse_args()
    impls = [s.strip() for s in a.impl.split(",") if s.strip()]
    for s in impls:
        if s not in IMPLS:
            ap.error("--impl %s: expected one of %s" % (s, ", ".join(IMPLS)))
    dev = torch.device(a.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if dev.type == "cuda" and not torch.cuda.is_available():
        sys.exit("gpu_gcn.py: --device %s: this torch (%s) sees no CUDA device; use --device cpu" % (a.device, torch.__version__))
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    a.threads = torch.get_num_threads()
    try:
        g = Graph(a.dir, dev, getattr(torch, a.index_dtype), not a.raw_features)
    except prepared_load.PreparedError as e:
        sys.exit("gpu_gcn.py: %s" % e)
    failed = False
    for impl in impls:
        if impl.startswith("pyg"):
            try:
                import torch_geometric  # noqa: F401
            except ImportError:
                print(json.dumps({"impl": impl, "skipped": "torch_geometric is not installed for %s" % sys.executable}),
                      flush=True)
                continue
        try:
            print(json.dumps(run(impl, g, a, dev)), flush=True)
        except (RuntimeError, NotImplementedError, ValueError, TypeError) as e:
            # One implementation failing (out of memory, an op this torch
            # lacks) must not lose the others' numbers of the same run.
            failed = True
            msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            print(json.dumps({"impl": impl, "error": "%s: %s" % (type(e).__name__, msg)}), flush=True)
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
