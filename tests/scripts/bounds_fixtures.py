#!/usr/bin/env python3
"""Small files that claim big costs, for tst_resource_bounds: each is a few MB at most, and its
metadata (a long key, many tiny tensors, a long node name over many initializers, a gzip bomb, a
deep config.json, a shard count) once made QuantLens take minutes or gigabytes.

  bounds_fixtures.py CASE OUT_DIR

Written byte by byte (GGUF, safetensors, protobuf wire format, JSON) where the format is simple, and
with onnx.helper / h5py where a library writes it. Prints the files it wrote, one a line.
"""
import json
import os
import struct
import sys
import zlib


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_long_key(out):
    # One key of 256 KiB heading an array of 40,000 empty strings: 582 KB.
    path = os.path.join(out, "long_key.gguf")
    body = struct.pack("<4sIQQ", b"GGUF", 3, 0, 1)
    body += gguf_string("k" * (256 << 10)) + struct.pack("<I", 9)  # array
    body += struct.pack("<IQ", 8, 40000) + struct.pack("<Q", 0) * 40000  # of empty strings
    with open(path, "wb") as f:
        f.write(body)
    return [path]


def gguf_empty_tensors(out):
    # 200,000 tensors of shape [0] (F32, no bytes): 7.8 MB of tensor infos.
    path = os.path.join(out, "empty_tensors.gguf")
    n = 200000
    parts = [struct.pack("<4sIQQ", b"GGUF", 3, n, 0)]
    for i in range(n):
        parts.append(gguf_string("t%06d" % i) + struct.pack("<IQIQ", 1, 0, 0, 0))
    with open(path, "wb") as f:
        f.write(b"".join(parts))
    return [path]


def safetensors_many(out):
    # Two checkpoints of 60,000 tensors of 4 floats each, B = A + 1/64: 6.9 MB each.
    n = 60000
    paths = []
    for tag, delta in (("a", 0.0), ("b", 1.0 / 64)):
        header, data = {}, []
        for i in range(n):
            header["model.layers.%05d.weight" % i] = {
                "dtype": "F32", "shape": [4], "data_offsets": [16 * i, 16 * i + 16]}
            data.append(struct.pack("<4f", *(float(i % 7) + k + delta for k in range(4))))
        text = json.dumps(header, separators=(",", ":")).encode()
        text += b" " * (-len(text) % 8)
        path = os.path.join(out, "many_%s.safetensors" % tag)
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text + b"".join(data))
        paths.append(path)
    return paths


def onnx_long_if(out):
    # An If node named with 1 MB over then-branches of 1,500 (and 1,000) one-float initializers:
    # each subgraph tensor is named "<node name>/then_branch/<name>", so 1 MB each.
    from onnx import TensorProto, helper

    paths = []
    for count in (1500, 1000):
        inits = [helper.make_tensor("w%d" % i, TensorProto.FLOAT, [1], [float(i)]) for i in range(count)]
        then = helper.make_graph([], "then", [], [helper.make_tensor_value_info("w0", TensorProto.FLOAT, [1])],
                                 initializer=inits)
        other = helper.make_graph([], "else", [], [helper.make_tensor_value_info("w0", TensorProto.FLOAT, [1])],
                                  initializer=[inits[0]])
        node = helper.make_node("If", ["cond"], ["y"], name="n" * (1 << 20), then_branch=then,
                                else_branch=other)
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        path = os.path.join(out, "long_if_%d.onnx" % count)
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        paths.append(path)
    return paths


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field(number, payload):  # a length-delimited field
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def onnx_constants(out):
    # 2,400,000 Constant nodes with one value_float each, in the protobuf wire format: 110 MB.
    n = 2400000
    attribute = field(1, b"value_float") + b"\x15" + struct.pack("<f", 1.0) + b"\xa0\x01\x01"  # f, type
    # Outputs "c0000000" on: every node is as long, so only the name changes between them.
    tail = field(4, b"Constant") + field(5, attribute)
    head = varint(1 << 3 | 2) + varint(2 + 8 + len(tail)) + b"\x12\x08"
    name = field(2, b"g")
    graph_bytes = n * (len(head) + 8 + len(tail)) + len(name)
    path = os.path.join(out, "constants.onnx")
    with open(path, "wb") as f:
        f.write(b"\x08\x08" + field(8, b"\x10\x11"))  # ir_version 8, opset 17
        f.write(varint(7 << 3 | 2) + varint(graph_bytes))  # the graph, written in slices
        for first in range(0, n, 100000):
            f.write(b"".join([head + b"c%07d" % i + tail for i in range(first, min(n, first + 100000))]))
        f.write(name)
    return [path]


def hdf5_gzip_bomb(out):
    # 1 GiB of zeros as gzip chunks (4 GiB of f32), beside a small real tensor: about 4 MB.
    import h5py
    import numpy as np

    path = os.path.join(out, "gzip_bomb.h5")
    rows, cols = 16384, 65536
    with h5py.File(path, "w") as f:
        d = f.create_dataset("bomb", shape=(rows, cols), dtype="f4", chunks=(64, cols), compression="gzip",
                             compression_opts=9, track_times=False)
        chunk = zlib.compress(bytes(64 * cols * 4), 9)  # every chunk the same: compressed once
        for r in range(0, rows, 64):
            d.id.write_direct_chunk((r, 0), chunk)
        f.create_dataset("dense/kernel", data=np.arange(64, dtype="f4").reshape(8, 8), track_times=False)
    return [path]


def deep_config(out):
    # A safetensors model whose config.json beside it is 2 MB of nested arrays.
    folder = os.path.join(out, "deep_config")
    os.makedirs(folder, exist_ok=True)
    header = json.dumps({"w.weight": {"dtype": "F32", "shape": [4, 8], "data_offsets": [0, 128]}}).encode()
    header += b" " * (-len(header) % 8)
    model = os.path.join(folder, "model.safetensors")
    with open(model, "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header + struct.pack("<32f", *range(32)))
    depth = 1 << 20
    with open(os.path.join(folder, "config.json"), "w") as f:
        f.write('{"model_type": "llama", "x": ' + "[" * depth + "]" * depth + "}")
    return [model]


def merge_huge_count(out):
    # A partial report that claims 2^40 shards.
    path = os.path.join(out, "part_huge.json")
    part = {"file": "model.safetensors", "tensors": [],
            "shard": {"index": 0, "count": 1 << 40, "selected": 0, "selection": "", "positions": []}}
    with open(path, "w") as f:
        json.dump(part, f)
    return [path]


CASES = {
    "gguf-long-key": gguf_long_key,
    "gguf-empty-tensors": gguf_empty_tensors,
    "safetensors-many": safetensors_many,
    "onnx-long-if": onnx_long_if,
    "onnx-constants": onnx_constants,
    "hdf5-gzip-bomb": hdf5_gzip_bomb,
    "deep-config": deep_config,
    "merge-huge-count": merge_huge_count,
}

if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in CASES:
        sys.exit("usage: bounds_fixtures.py {%s} OUT_DIR" % ",".join(CASES))
    os.makedirs(sys.argv[2], exist_ok=True)
    for p in CASES[sys.argv[1]](sys.argv[2]):
        print(p)
