"""Checks quantlens-cli's exported codes against torch.quantize_per_channel(...).int_repr().

usage: cli_torch_check.py FIXTURE OUT TENSOR SCALE ZP AXIS qint8|quint8
Reads the safetensors files with the standard library; prints the first mismatch and exits 1 on any.
"""
import json
import struct
import sys

import numpy as np
import torch

DTYPES = {"F32": np.float32, "I64": np.int64, "I32": np.int32, "I8": np.int8, "U8": np.uint8}


def read_safetensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        a, b = info["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + a:8 + n + b], dtype=DTYPES[info["dtype"]]).reshape(info["shape"])
    return out


def main(fixture, out, tensor, scale, zp, axis, dtype):
    src, res = read_safetensors(fixture), read_safetensors(out)
    q = torch.quantize_per_channel(torch.from_numpy(src[tensor].copy()),
                                   torch.from_numpy(src[scale].astype(np.float64)),
                                   torch.from_numpy(src[zp].astype(np.int64)), int(axis), getattr(torch, dtype))
    expected = q.int_repr().numpy()
    actual = res[tensor]
    if actual.shape != expected.shape or not np.array_equal(actual.astype(np.int64), expected.astype(np.int64)):
        bad = np.argwhere(actual.astype(np.int64) != expected.astype(np.int64))
        print("mismatch at", bad[:5].tolist(), "quantlens", actual.ravel()[:8].tolist(),
              "torch", expected.ravel()[:8].tolist())
        return 1
    print("ok", expected.size, "codes")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
