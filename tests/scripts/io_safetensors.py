#!/usr/bin/env python3
"""safetensors with nothing but struct, json and numpy, for QuantLens round-trip tests.

  io_safetensors.py make OUT.safetensors OUT.json   write one tensor per dtype, bytes in OUT.json
  io_safetensors.py dump FILE.safetensors           print {metadata, tensors: {name: dtype, shape, hex}}

The reader checks the file as the format defines it, independently of QuantLens' parser.
"""
import json
import struct
import sys

import numpy as np

SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I8": 1, "U8": 1, "I16": 2, "I32": 4,
         "I64": 8, "F8_E4M3": 1, "F8_E5M2": 1, "BOOL": 1}


def sample_bytes(dtype, count):
    """Deterministic values that exercise each type: signs, subnormals, NaN/Inf bit patterns."""
    rng = np.random.default_rng(sum(map(ord, dtype)))
    if dtype == "F64":
        v = rng.standard_normal(count) * 1e3
        v[:4] = [np.inf, -0.0, 5e-324, np.nan][: min(4, count)]
        return v.astype("<f8").tobytes()
    if dtype == "F32":
        v = rng.standard_normal(count).astype("<f4")
        v[:3] = [np.float32(1e-45), -np.inf, np.float32(3.4028235e38)][: min(3, count)]
        return v.tobytes()
    if dtype == "F16":
        return (rng.standard_normal(count) * 10).astype("<f2").tobytes()
    if dtype in ("BF16",):
        return rng.integers(0, 1 << 16, count, dtype="<u2").tobytes()
    if dtype == "BOOL":
        return rng.integers(0, 2, count, dtype="u1").tobytes()
    if dtype in ("F8_E4M3", "F8_E5M2", "U8"):
        return rng.integers(0, 256, count, dtype="u1").tobytes()
    kind = {"I8": "<i1", "I16": "<i2", "I32": "<i4", "I64": "<i8"}[dtype]
    info = np.iinfo(np.dtype(kind))
    v = rng.integers(info.min, info.max, count, dtype=kind, endpoint=True)
    v[:2] = [info.min, info.max][: min(2, count)]
    return v.tobytes()


def write(path, tensors, metadata=None):
    header, blobs, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, (dtype, shape, data) in tensors.items():
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def make(out, expected):
    tensors, shapes = {}, [[3, 5], [7], [2, 3, 4], []]
    for i, dtype in enumerate(SIZES):
        shape = shapes[i % len(shapes)]
        count = int(np.prod(shape)) if shape else 1
        tensors["model.%s.weight" % dtype.lower()] = (dtype, shape, sample_bytes(dtype, count))
    tensors["empty.bias"] = ("F32", [0, 4], b"")
    write(out, tensors, {"format": "pt", "origin": "python struct+json"})
    with open(expected, "w") as f:
        json.dump({n: {"dtype": d, "shape": s, "hex": b.hex()} for n, (d, s, b) in tensors.items()}, f)


def dump(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    data = raw[8 + n:]
    metadata = header.pop("__metadata__", {})
    out = {}
    for name, info in header.items():
        begin, end = info["data_offsets"]
        count = int(np.prod(info["shape"])) if info["shape"] else 1
        assert end - begin == count * SIZES[info["dtype"]], name
        assert end <= len(data), name
        out[name] = {"dtype": info["dtype"], "shape": info["shape"], "hex": data[begin:end].hex()}
    json.dump({"metadata": metadata, "tensors": out, "header_length": n}, sys.stdout)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "dump":
        dump(sys.argv[2])
    else:
        sys.exit("usage: io_safetensors.py make OUT EXPECTED | dump FILE")
