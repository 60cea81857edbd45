#!/usr/bin/env python3
"""NumPy computing the statistics QuantLens reports for int8 per-channel absmax, timed best-of-N.

Usage: statistics_peer.py ROWS COLS REPEAT  ->  one JSON object on stdout:
{"quantize_ms": ..., "statistics_ms": ..., "job_ms": ...}. The statistics are the report's: error
sums (MSE, SQNR, max and mean |error| with its index, relative error, cosine, the 1e-3 / 5e-3
relative-error ratios), the linear error histogram (101 bins), the log10 |error| histogram (60
bins), the value histogram (256 bins), per-channel clipping, squared error split into clipping and
rounding, SQNR and max |error|, and the code histogram with its entropy. The same data as
bench_pipeline: normal values from a fixed seed.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_timing import best_ms  # noqa: E402

rows, cols, repeat = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])


def best(fn):
    return best_ms(fn, repeat)


rng = np.random.default_rng(1)
x = rng.standard_normal((rows, cols), dtype=np.float32)


def quantize():
    scale = np.abs(x).max(axis=1, keepdims=True) / np.float32(127)
    scale[scale == 0] = 1
    q = np.clip(np.rint(x / scale), -128, 127).astype(np.int8)
    return q, scale


def statistics(q, scale):
    xhat = q.astype(np.float32) * scale
    e = (x - xhat).astype(np.float64)
    xd = x.astype(np.float64)
    ae = np.abs(e)
    sum_sq_e, sum_sq_x = float((e * e).sum()), float((xd * xd).sum())
    out = {
        "mse": sum_sq_e / e.size,
        "sqnr": 10 * np.log10(sum_sq_x / sum_sq_e),
        "max_abs": float(ae.max()),
        "worst": int(ae.argmax()),
        "mean_abs": float(ae.mean()),
        "rel": np.sqrt(sum_sq_e / sum_sq_x),
        "cosine": float((xd * xhat).sum() / np.sqrt(sum_sq_x * float((xhat.astype(np.float64) ** 2).sum()))),
        "r1": float((ae > 1e-3 * np.abs(xd)).mean()),
        "r5": float((ae > 5e-3 * np.abs(xd)).mean()),
    }
    lim = out["max_abs"]
    np.histogram(e, bins=101, range=(-lim, lim))
    nz = ae[ae > 0]
    np.histogram(np.log10(nz), bins=60)
    np.histogram(x, bins=256, range=(float(x.min()), float(x.max())))
    lo, hi = -128 * scale - 0.5 * scale, 127 * scale + 0.5 * scale
    clipped = (x < lo) | (x > hi)
    e2 = e * e
    clip_err = np.where(clipped, e2, 0).sum(axis=1)
    per_channel = {
        "clipped": clipped.sum(axis=1),
        "clip_err": clip_err,
        "round_err": e2.sum(axis=1) - clip_err,
        "sqnr": 10 * np.log10((xd * xd).sum(axis=1) / e2.sum(axis=1)),
        "max_abs": ae.max(axis=1),
    }
    counts = np.bincount(q.ravel().astype(np.int16) + 128, minlength=256)
    p = counts[counts > 0] / q.size
    out["entropy"] = float(-(p * np.log2(p)).sum())
    return out, per_channel


q, scale = quantize()
result = {
    "quantize_ms": best(quantize),
    "statistics_ms": best(lambda: statistics(q, scale)),
    "job_ms": best(lambda: statistics(*quantize())),
}
print(json.dumps(result))
