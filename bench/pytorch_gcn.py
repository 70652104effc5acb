#!/usr/bin/env python3
"""Times the GCN of bench/rmat16.toml in PyTorch on the CPU, for the
side-by-side comparison of bench/vs-pytorch.sh.

It reads a prepared dataset written with `scalegnn prepare -blocks 1
-permute none` (one CSR block of the normalised adjacency, one feature
block) through bench/prepared_load.py, which row-normalises the features as
scalegnn does by default, builds the same model as scalegnn (L graph convolutions
H = relu(Â X W), no bias, no dropout, softmax cross-entropy over the
training vertices, Adam), and prints one JSON line with the mean epoch
time over the timed epochs and the time split into SpMM (torch.sparse.mm),
GEMM and everything else.

    python3 bench/pytorch_gcn.py DIR [-layers 3] [-hidden 128] [-epochs 10] [-threads 2]
"""
import argparse
import json
import time

import numpy as np
import torch

import prepared_load


def load(d):
    indptr, indices, data, x, labels, train = prepared_load.load(d)
    n = len(indptr) - 1
    # A coalesced COO tensor: torch.sparse.mm's usual operand (CSR support
    # is still beta in 1.13).
    idx = torch.from_numpy(np.stack([prepared_load.coo_rows(indptr), indices.astype(np.int64)]))
    adj = torch.sparse_coo_tensor(idx, torch.from_numpy(data), size=(n, n)).coalesce()
    return adj, torch.from_numpy(x), torch.from_numpy(labels), torch.from_numpy(train)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("-layers", type=int, default=3)
    ap.add_argument("-hidden", type=int, default=128)
    ap.add_argument("-epochs", type=int, default=10)
    ap.add_argument("-warmup", type=int, default=2)
    ap.add_argument("-threads", type=int, default=2)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(1)
    adj, x, labels, train = load(a.dir)
    classes = int(labels.max()) + 1
    widths = [x.shape[1]] + [a.hidden] * (a.layers - 1) + [classes]
    ws = [torch.nn.Parameter(torch.randn(widths[i], widths[i + 1]) * (2.0 / (widths[i] + widths[i + 1])) ** 0.5)
          for i in range(a.layers)]
    opt = torch.optim.Adam(ws, lr=0.01)
    times = {"spmm": 0.0, "gemm": 0.0}

    class SpMM(torch.autograd.Function):
        # Â is symmetric, so the backward product is Â·dH as well; timed
        # like the forward.
        @staticmethod
        def forward(ctx, h):
            t = time.perf_counter()
            out = torch.sparse.mm(adj, h)
            times["spmm"] += time.perf_counter() - t
            return out

        @staticmethod
        def backward(ctx, g):
            t = time.perf_counter()
            out = torch.sparse.mm(adj, g.contiguous())
            times["spmm"] += time.perf_counter() - t
            return out

    class MatMul(torch.autograd.Function):
        @staticmethod
        def forward(ctx, h, w):
            ctx.save_for_backward(h, w)
            t = time.perf_counter()
            out = h @ w
            times["gemm"] += time.perf_counter() - t
            return out

        @staticmethod
        def backward(ctx, g):
            h, w = ctx.saved_tensors
            t = time.perf_counter()
            dh, dw = g @ w.t(), h.t() @ g
            times["gemm"] += time.perf_counter() - t
            return dh, dw

    def epoch():
        opt.zero_grad(set_to_none=True)
        h = x
        for i, w in enumerate(ws):
            h = MatMul.apply(SpMM.apply(h), w)
            if i < len(ws) - 1:
                h = torch.relu(h)
        loss = torch.nn.functional.cross_entropy(h[train], labels[train])
        loss.backward()
        opt.step()
        return float(loss)

    for _ in range(a.warmup):
        epoch()
    times["spmm"] = times["gemm"] = 0.0
    t0 = time.perf_counter()
    for _ in range(a.epochs):
        epoch()
    total = (time.perf_counter() - t0) / a.epochs
    spmm, gemm = times["spmm"] / a.epochs, times["gemm"] / a.epochs
    print(json.dumps({"impl": "pytorch " + torch.__version__, "threads": a.threads, "n": adj.shape[0],
                      "nnz": int(adj._nnz()), "epoch_s": total, "spmm_s": spmm, "gemm_s": gemm,
                      "other_s": total - spmm - gemm}))


if __name__ == "__main__":
    main()
