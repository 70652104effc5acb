"""Reads a prepared dataset (prepared/doc.go, docs/prepared.md) of one block
and no permutation, as `scalegnn prepare -blocks 1 -permute none` writes it,
into NumPy arrays, for the comparison scripts bench/pytorch_gcn.py and
bench/gpu_gcn.py. One loader, so both read exactly what scalegnn reads.

The adjacency is already Â = D^-1/2 (A + I) D^-1/2 (dataset.NormalizeGCN),
so nothing is normalised here but the features: scalegnn row-normalises them
as it reads them when the job's dataset.normalize_features is true (the
default), exactly as dataset.RowNormalize does (sums in float64, rows that
sum to zero left alone), and so does load unless told otherwise.
"""
import os
import re

import numpy as np


class PreparedError(Exception):
    """A dataset this loader cannot read; the message is one line naming the
    file and how to fix it."""


def _meta(d):
    path = os.path.join(d, "meta.toml")
    try:
        text = open(path, encoding="utf-8").read()
    except OSError as e:
        raise PreparedError("%s: %s; write the dataset with `scalegnn prepare -blocks 1 -permute none`" % (path, e.strerror))
    try:
        import tomllib  # Python >= 3.11
        m = tomllib.loads(text)
        return path, m.get("blocks"), m.get("permute", {}).get("scheme")
    except ImportError:
        # Older Pythons: the two keys needed are plain top-level and
        # [permute] lines that scalegnn writes itself.
        blocks = re.search(r"(?m)^blocks\s*=\s*(\d+)", text)
        scheme = re.search(r'(?m)^\s*scheme\s*=\s*"(\w+)"', text)
        return path, blocks and int(blocks.group(1)), scheme and scheme.group(1)


def load(d, normalize_features=True):
    """Returns (indptr int64, indices int32, data float32, x float32 N×F,
    labels int64, train bool) of the prepared dataset in directory d.

    Only a dataset of one block without permutation is accepted: with
    blocks or a permutation the arrays would have to be reassembled and
    reordered, which the comparison does not need."""
    path, blocks, scheme = _meta(d)
    if blocks != 1 or scheme != "none":
        raise PreparedError("%s: blocks = %s, permute.scheme = %r; expected blocks = 1 and scheme \"none\": prepare it with "
                            "`scalegnn prepare ... -blocks 1 -permute none`" % (path, blocks, scheme))
    adj = os.path.join(d, "adj0")
    indptr = np.load(os.path.join(adj, "r0c0.indptr.npy"))
    indices = np.load(os.path.join(adj, "r0c0.indices.npy"))
    data = np.load(os.path.join(adj, "r0c0.data.npy"))
    x = np.load(os.path.join(d, "features", "r0.npy"))
    labels = np.load(os.path.join(d, "labels.npy")).astype(np.int64)
    train = np.load(os.path.join(d, "train.npy"))
    if normalize_features:
        s = x.sum(axis=1, dtype=np.float64)
        inv = np.ones_like(s)
        np.divide(1.0, s, out=inv, where=s != 0)
        x = (x * inv[:, None]).astype(np.float32)  # product in float64, as RowNormalize
    return indptr, indices, data, x, labels, train


def coo_rows(indptr):
    """The row index of every nonzero of a CSR matrix, int64."""
    n = len(indptr) - 1
    return np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
