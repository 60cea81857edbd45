#!/usr/bin/env python3
"""PyTorch and NumPy doing bench_quantize's jobs, timed best-of-N in one process.

Usage: quantize_peers.py ROWS COLS DTYPE REPEAT THREADS  ->  one JSON object on stdout:
{job: {"torch": ms or null, "numpy": ms or null}}. A peer that cannot do a job reports null
(PyTorch 1.13 and NumPy have no fp8 dtype). bf16 input: torch keeps a bfloat16 tensor and converts
it as a user would (x.float()); NumPy has no bf16, so it widens the raw uint16 words itself.
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_timing import best_ms  # noqa: E402

rows, cols, dtype, repeat, threads = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5])


def best(fn):
    return best_ms(fn, repeat)


rng = np.random.default_rng(1)
x32 = rng.standard_normal((rows, cols), dtype=np.float32)
result = {}

try:
    import torch

    torch.set_num_threads(threads)
    xt = torch.from_numpy(x32)
    if dtype == "bf16":
        xt = xt.to(torch.bfloat16)
    f = (lambda: xt.float()) if dtype == "bf16" else (lambda: xt)
    scale = float(x32.__abs__().max() / 127)
    ch_scales = torch.from_numpy(np.abs(x32).max(axis=1) / 127).double()
    zps = torch.zeros(rows, dtype=torch.long)

    def t_amax():
        x = f()
        return torch.quantize_per_channel(x, (x.abs().amax(dim=1) / 127).double(), zps, 0, torch.qint8)

    def t_full():
        x = f()
        s = x.abs().amax(dim=1) / 127
        q = torch.quantize_per_channel(x, s.double(), zps, 0, torch.qint8)
        e = x - q.dequantize()
        mse = (e * e).mean()
        return mse, (x * x).mean(), e.abs().max()

    def t_group():
        x = f().reshape(-1, 128)
        s = x.abs().amax(dim=1, keepdim=True) / 7
        return torch.clamp(torch.round(x / s), -8, 7).to(torch.int8)

    result["torch"] = {
        "per-tensor int8": best(lambda: torch.quantize_per_tensor(f(), scale, 0, torch.qint8)),
        "per-channel int8": best(lambda: torch.quantize_per_channel(f(), ch_scales, zps, 0, torch.qint8)),
        "full job (amax + quantize)": best(t_amax),
        "full job (+ stats)": best(t_full),
        "per-group int4 g128": best(t_group),
        "fp8 e4m3": None,
    }
except ImportError:
    result["torch"] = None

xb = (x32.view(np.uint32) >> 16).astype(np.uint16) if dtype == "bf16" else None
g = (lambda: (xb.astype(np.uint32) << 16).view(np.float32)) if dtype == "bf16" else (lambda: x32)
inv = np.float32(1) / np.float32(np.abs(x32).max() / 127)
ch_inv = (np.float32(1) / (np.abs(x32).max(axis=1) / np.float32(127)))[:, None]


def n_amax():
    x = g()
    inv = np.float32(1) / (np.abs(x).max(axis=1, keepdims=True) / np.float32(127))
    return np.clip(np.rint(x * inv), -128, 127).astype(np.int8)


def n_full():
    x = g()
    s = np.abs(x).max(axis=1, keepdims=True) / np.float32(127)
    q = np.clip(np.rint(x * (np.float32(1) / s)), -128, 127).astype(np.int8)
    e = x - q * s
    return q, np.mean(e * e), np.mean(x * x), np.abs(e).max()


def n_group():
    x = g().reshape(-1, 128)
    s = np.abs(x).max(axis=1, keepdims=True) / np.float32(7)
    return np.clip(np.rint(x / s), -8, 7).astype(np.int8)


result["numpy"] = {
    "per-tensor int8": best(lambda: np.clip(np.rint(g() * inv), -128, 127).astype(np.int8)),
    "per-channel int8": best(lambda: np.clip(np.rint(g() * ch_inv), -128, 127).astype(np.int8)),
    "full job (amax + quantize)": best(n_amax),
    "full job (+ stats)": best(n_full),
    "per-group int4 g128": best(n_group),
    "fp8 e4m3": None,
}
json.dump(result, sys.stdout)
