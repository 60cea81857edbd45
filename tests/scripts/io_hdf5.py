#!/usr/bin/env python3
"""HDF5 files made and read with h5py, for QuantLens round-trip tests.

  io_hdf5.py make OUT.h5 OUT.json   datasets of every supported type and storage layout, plus
                                    Keras-style groups and unsupported types; OUT.json holds each
                                    readable dataset's expected dtype, shape and little-endian bytes
  io_hdf5.py dump FILE.h5           print {attrs, datasets: {path: dtype, shape, hex, attrs}}
"""
import json
import sys

import h5py
import numpy as np

# numpy type -> QuantLens dtype name and the little-endian numpy type QuantLens holds it as.
AS = {"f8": ("F64", "<f8"), "f4": ("F32", "<f4"), "f2": ("F16", "<f2"), "i1": ("I8", "<i1"),
      "u1": ("U8", "<u1"), "i2": ("I16", "<i2"), "i4": ("I32", "<i4"), "i8": ("I64", "<i8"),
      "u2": ("I32", "<i4"), "u4": ("I64", "<i8"), "b1": ("BOOL", "u1")}


def values(kind, shape, seed):
    rng = np.random.default_rng(seed)
    if kind == "b1":
        return rng.integers(0, 2, shape).astype(bool)
    if kind[0] == "f":
        return (rng.standard_normal(shape) * 7).astype(kind)
    info = np.iinfo(np.dtype(kind))
    return rng.integers(info.min, info.max, shape, dtype=np.dtype(kind), endpoint=True)


def make(out, expected):
    exp = {}
    with h5py.File(out, "w") as f:
        f.attrs["keras_version"] = "2.13.1"
        seed = 0
        for kind in AS:
            for order in ("<", ">"):
                if kind in ("b1",) and order == ">":
                    continue
                for storage in ("contiguous", "chunked", "gzip"):
                    seed += 1
                    shape = (6, 5) if storage != "contiguous" else (4, 3, 2)
                    v = values(kind, shape, seed)
                    dt = v.dtype.newbyteorder(order) if v.dtype.itemsize > 1 else v.dtype
                    name = "types/%s/%s/%s" % (kind, "le" if order == "<" else "be", storage)
                    kw = {}
                    if storage != "contiguous":
                        kw["chunks"] = (2, 5)
                    if storage == "gzip":
                        kw["compression"] = "gzip"
                    f.create_dataset(name, data=v.astype(dt), **kw)
                    dtype, held = AS[kind]
                    exp[name] = {"dtype": dtype, "shape": list(shape), "hex": v.astype(held).tobytes().hex()}
        # Keras 2 HDF5 layout: model_weights/<layer>/<layer>/<weight>:0
        for layer, shapes in (("dense", {"kernel:0": (8, 4), "bias:0": (4,)}),
                              ("conv2d", {"kernel:0": (3, 3, 1, 2), "bias:0": (2,)})):
            g = f.create_group("model_weights/%s/%s" % (layer, layer))
            f["model_weights/%s" % layer].attrs["weight_names"] = [
                ("%s/%s" % (layer, w)).encode() for w in shapes]
            for w, shape in shapes.items():
                seed += 1
                v = values("f4", shape, seed)
                g.create_dataset(w, data=v)
                exp["model_weights/%s/%s/%s" % (layer, layer, w)] = {
                    "dtype": "F32", "shape": list(shape), "hex": v.astype("<f4").tobytes().hex()}
        f.create_dataset("scalar", data=np.float32(2.5))
        exp["scalar"] = {"dtype": "F32", "shape": [], "hex": np.float32(2.5).tobytes().hex()}
        f.create_dataset("empty", shape=(0, 3), dtype="f4")
        exp["empty"] = {"dtype": "F32", "shape": [0, 3], "hex": ""}
        # Unsupported: skipped from the listing, with a reason on load.
        f.create_dataset("unsupported/strings", data=np.array([b"a", b"bc"]))
        # Not listed, so never checked by the readers: printed escaped when inspect says why.
        f.create_dataset("unsupported/esc\x1b[2J", data=np.array([b"a"]))
        f.create_dataset("unsupported/compound", data=np.zeros(3, dtype=[("a", "<i4"), ("b", "<f4")]))
        f.create_dataset("unsupported/uint64", data=np.arange(4, dtype="<u8"))
        # Storage never written reads as the fill value: a few bytes standing for any size. Refused.
        f.create_dataset("unwritten/chunked", shape=(4000, 1024), dtype="f4", chunks=(1, 1024))
        f.create_dataset("unwritten/contiguous", shape=(64, 64), dtype="f4")
        partly = f.create_dataset("unwritten/partly", shape=(8, 16), dtype="f4", chunks=(2, 16))
        partly[0:2] = values("f4", (2, 16), 99)
        f["soft_link"] = h5py.SoftLink("/scalar")
    with open(expected, "w") as fh:
        json.dump(exp, fh)


def attr(v):
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    return v


def dump(path):
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                v = obj[()]
                a = np.asarray(v)
                out[name] = {"dtype": a.dtype.str, "shape": list(a.shape),
                             "hex": a.astype(a.dtype.newbyteorder("<")).tobytes().hex(),
                             "attrs": {k: attr(x) for k, x in obj.attrs.items()}}
            else:
                out[name] = {"group": True, "attrs": {k: attr(x) for k, x in obj.attrs.items()}}
        f.visititems(visit)
        json.dump({"attrs": {k: attr(x) for k, x in f.attrs.items()}, "datasets": out}, sys.stdout)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "dump":
        dump(sys.argv[2])
    else:
        sys.exit("usage: io_hdf5.py make OUT EXPECTED | dump FILE")
