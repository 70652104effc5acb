"""A two-layer GAT (8 heads of 8, then one output head) with PyG's GATConv,
timed per epoch (forward, backward, Adam) on the prepared dataset that
scalegnn trains on: the GPU comparison of bench/vs-pyg-gat.sh.

The model is scalegnn's (gcn.GATLayer): attention over every entry of the
stored Â's pattern (A + I, so add_self_loops=False), LeakyReLU 0.2, a
bias (as scalegnn's GAT layers have), no dropout (timing), ELU between
the layers, the output head's mean. Prints one JSON line.
"""
import argparse
import json
import statistics
import sys
import time

import numpy as np
import torch

import prepared_load


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir", help="prepared dataset (scalegnn prepare -blocks 1 -permute none)")
    ap.add_argument("--device", default="")
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=8)
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    a = ap.parse_args()
    dev = torch.device(a.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    try:
        from torch_geometric.nn import GATConv
        import torch_geometric
    except ImportError:
        print(json.dumps({"impl": "pyg-gatconv", "skipped": "torch_geometric is not installed for %s" % sys.executable}))
        return
    indptr, indices, _, x, labels, train = prepared_load.load(a.dir, True)
    n = len(indptr) - 1
    # PyG's flow is source_to_target: edge (j, i) sends x_j to i; the row
    # of Â is the target.
    ei = torch.from_numpy(np.stack([indices.astype(np.int64), prepared_load.coo_rows(indptr)])).to(dev)
    x = torch.from_numpy(x).to(dev)
    idx = torch.from_numpy(np.flatnonzero(train)).to(dev)
    y = torch.from_numpy(labels).to(dev)[idx]
    classes = int(labels.max()) + 1
    torch.manual_seed(1)
    c1 = GATConv(x.shape[1], a.hidden, heads=a.heads, concat=True, negative_slope=0.2, dropout=0.0,
                 add_self_loops=False, bias=True).to(dev)
    c2 = GATConv(a.hidden * a.heads, classes, heads=1, concat=False, negative_slope=0.2, dropout=0.0,
                 add_self_loops=False, bias=True).to(dev)
    opt = torch.optim.Adam(list(c1.parameters()) + list(c2.parameters()), lr=0.005, weight_decay=5e-4)

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    def epoch():
        opt.zero_grad(set_to_none=True)
        h = torch.nn.functional.elu(c1(x, ei))
        loss = torch.nn.functional.cross_entropy(c2(h, ei)[idx], y)
        loss.backward()
        opt.step()
        return loss

    if dev.type == "cuda":
        torch.cuda.reset_peak_memory_stats(dev)
    for _ in range(a.warmup):
        epoch()
    times = []
    for _ in range(a.epochs):
        sync()
        t = time.perf_counter()
        epoch()
        sync()
        times.append(time.perf_counter() - t)
    out = {"impl": "pyg-gatconv", "epoch_s_median": statistics.median(times), "epoch_s_min": min(times),
           "epochs": a.epochs, "n": n, "nnz": len(indices), "heads": a.heads, "hidden": a.hidden,
           "torch": torch.__version__, "pyg": torch_geometric.__version__,
           "device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"}
    if dev.type == "cuda":
        out["peak_mem_gib"] = torch.cuda.max_memory_allocated(dev) / 2**30
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
