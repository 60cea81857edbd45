#!/usr/bin/env python3
"""Convert the weights of an ONNX model to safetensors and HDF5, for QuantLens.

Weights are collected from graph initializers AND from Constant nodes (many exporters, Paddle2ONNX
among them, keep every weight in Constant nodes), including those inside subgraphs of control-flow
nodes (If / Loop / Scan), whose names get the path of the node that holds them.

  convert_onnx.py MODEL.onnx [--safetensors OUT.safetensors] [--hdf5 OUT.h5] [--inventory OUT.json]
                  [--min-elements N]

The inventory lists every written tensor: name, dtype, shape and an FNV-1a 64-bit hash of its
little-endian bytes, so a reader can be checked value for value without Python.
Needs: onnx, numpy; h5py for --hdf5.
"""
import argparse
import json
import struct
import sys

import numpy as np
import onnx
from onnx import numpy_helper

SAFETENSORS = {np.dtype("float64"): "F64", np.dtype("float32"): "F32", np.dtype("float16"): "F16",
               np.dtype("int8"): "I8", np.dtype("uint8"): "U8", np.dtype("int16"): "I16",
               np.dtype("int32"): "I32", np.dtype("int64"): "I64", np.dtype("bool"): "BOOL"}


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def constant_value(node):
    """The array a Constant node produces, or None for forms that are not weights (sparse, strings)."""
    for a in node.attribute:
        if a.name == "value":
            return numpy_helper.to_array(a.t)
        if a.name == "value_float":
            return np.array(a.f, dtype=np.float32)
        if a.name == "value_floats":
            return np.array(list(a.floats), dtype=np.float32)
        if a.name == "value_int":
            return np.array(a.i, dtype=np.int64)
        if a.name == "value_ints":
            return np.array(list(a.ints), dtype=np.int64)
    return None


def collect(graph, prefix, out):
    for init in graph.initializer:
        out.append((prefix + init.name, numpy_helper.to_array(init)))
    for i, node in enumerate(graph.node):
        if node.op_type == "Constant" and node.domain in ("", "ai.onnx"):
            value = constant_value(node)
            if value is not None and node.output:
                out.append((prefix + node.output[0], value))
        for a in node.attribute:
            # Subgraphs (If branches, Loop / Scan bodies) carry their own initializers and constants.
            owner = "%s%s/%s/" % (prefix, node.name or "%s_%d" % (node.op_type, i), a.name)
            if a.type == onnx.AttributeProto.GRAPH:
                collect(a.g, owner, out)
            elif a.type == onnx.AttributeProto.GRAPHS:
                for k, g in enumerate(a.graphs):
                    collect(g, "%s%d/" % (owner, k), out)


def weights(model_path, min_elements):
    model = onnx.load(model_path)  # also loads external data stored next to the model
    found = []
    collect(model.graph, "", found)
    result, seen = [], set()
    for name, value in found:
        value = np.array(value, order="C")  # (ascontiguousarray would turn scalars into [1])
        if value.dtype not in SAFETENSORS or value.size < min_elements:
            continue  # shape constants, axes, strings: not weights
        if name in seen:
            sys.exit("duplicate tensor name %r in %s" % (name, model_path))
        seen.add(name)
        result.append((name, value.astype(value.dtype.newbyteorder("<"))))
    return result


def write_safetensors(path, tensors, metadata):
    header, offset = {"__metadata__": metadata}, 0
    for name, v in tensors:
        header[name] = {"dtype": SAFETENSORS[v.dtype.newbyteorder("=")], "shape": list(v.shape),
                        "data_offsets": [offset, offset + v.nbytes]}
        offset += v.nbytes
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)  # 8-byte aligned data, as the reference writer does
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for _, v in tensors:
            f.write(v.tobytes())


def write_hdf5(path, tensors, metadata):
    import h5py
    with h5py.File(path, "w") as f:
        for k, v in metadata.items():
            f.attrs[k] = v
        for name, v in tensors:
            # ONNX names may contain '/', which HDF5 reads as groups: that keeps the model's tree.
            f.create_dataset(name.lstrip("/"), data=v)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("--safetensors")
    p.add_argument("--hdf5")
    p.add_argument("--inventory")
    p.add_argument("--min-elements", type=int, default=1)
    args = p.parse_args()
    tensors = weights(args.model, args.min_elements)
    meta = {"format": "pt", "source": args.model.rsplit("/", 1)[-1], "converted_by": "quantlens convert_onnx.py"}
    if args.safetensors:
        write_safetensors(args.safetensors, tensors, meta)
    if args.hdf5:
        write_hdf5(args.hdf5, tensors, meta)
    if args.inventory:
        with open(args.inventory, "w") as f:
            json.dump([{"name": n, "dtype": SAFETENSORS[v.dtype.newbyteorder("=")], "shape": list(v.shape),
                        "fnv1a64": fnv1a64(v.tobytes())} for n, v in tensors], f, indent=0)
    print("%d tensors from %s" % (len(tensors), args.model))


if __name__ == "__main__":
    main()
