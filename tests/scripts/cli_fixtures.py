"""Writes safetensors fixtures for tst_cli with the standard library and NumPy only.

usage: cli_fixtures.py OUT_DIR
  random.safetensors : w [8,16] f32 (seed 7); per-row scale [8] f32, zp [8] i64 (qint8), zpu [8] i64
                       (quint8); per-column scale1 [16] f32, zp1 [16] i64; b [5] f32; ids [3] i64
  tie.safetensors    : x [1,4] f32 with x = 0x3E8C41DB, scale [1] f32 = 0x3B0CCEAA, zp [1] i64 = 0
"""
import json
import struct
import sys
from pathlib import Path

import numpy as np


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, arr in tensors.items():
        dtype = {np.float32: "F32", np.int64: "I64", np.int32: "I32"}[arr.dtype.type]
        data = np.ascontiguousarray(arr).tobytes()
        header[name] = {"dtype": dtype, "shape": list(arr.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    Path(path).write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def bits(u):
    return np.frombuffer(struct.pack("<I", u), dtype=np.float32)[0]


def main(out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(7)
    w = rng.standard_normal((8, 16)).astype(np.float32)
    scale = (np.abs(w).max(axis=1) / 100).astype(np.float32)
    zp = rng.integers(-20, 20, size=8).astype(np.int64)
    scale1 = (np.abs(w).max(axis=0) / 60).astype(np.float32)
    zp1 = rng.integers(-5, 5, size=16).astype(np.int64)
    write_safetensors(out / "random.safetensors", {
        "w": w, "scale": scale, "zp": zp, "zpu": zp + 128, "scale1": scale1, "zp1": zp1,
        "b": rng.standard_normal(5).astype(np.float32),
        "ids": np.arange(3, dtype=np.int64)})
    x = np.array([[bits(0x3E8C41DB), 0.1, -0.05, 0.2]], dtype=np.float32)
    write_safetensors(out / "tie.safetensors", {
        "x": x, "scale": np.array([bits(0x3B0CCEAA)], dtype=np.float32), "zp": np.zeros(1, dtype=np.int64)})


if __name__ == "__main__":
    main(sys.argv[1])
