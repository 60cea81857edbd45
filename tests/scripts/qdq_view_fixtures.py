#!/usr/bin/env python3
"""A conv model for tst_qdq_views, and numpy's reading of its QDQ export.

  qdq_view_fixtures.py model OUT.onnx
      Two 3x3 convolutions (opset 13): conv.weight [6, 4, 3, 3] in ONNX's own layout, and k.kernel
      [3, 3, 6, 5], a Keras kernel kept as it is and transposed to [5, 6, 3, 3] for its Conv.
  qdq_view_fixtures.py read EXPORT.onnx OUT_DIR
      For each DequantizeLinear: its attributes and input shapes in OUT_DIR/qdq.json, and its output
      computed as ONNX defines it, (x - zero_point) * scale in f32 with the scale broadcast along
      `axis`, in OUT_DIR/<weight>.f32 (raw little-endian).

onnx.helper and numpy alone: the reading never asks QuantLens how to dequantize.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(path):
    rng = np.random.default_rng(39)
    w = (rng.standard_normal((6, 4, 3, 3)) * rng.uniform(0.2, 3.0, (6, 1, 1, 1))).astype(np.float32)
    k = (rng.standard_normal((3, 3, 6, 5)) * rng.uniform(0.2, 3.0, (1, 1, 1, 5))).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "conv.weight"], ["y"], name="conv"),
        helper.make_node("Transpose", ["k.kernel"], ["k.oihw"], perm=[3, 2, 0, 1], name="k.transpose"),
        helper.make_node("Conv", ["y", "k.oihw"], ["z"], name="k.conv"),
    ]
    graph = helper.make_graph(
        nodes, "conv_views",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 5, 4, 4])],
        [numpy_helper.from_array(w, "conv.weight"), numpy_helper.from_array(k, "k.kernel")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, path)


def codes_of(t):
    if t.data_type in (21, 22):  # uint4, int4: two a byte, low nibble first (newer than Debian's onnx)
        raw = np.frombuffer(t.raw_data, dtype=np.uint8)
        nib = np.stack([raw & 0x0F, raw >> 4], axis=1).reshape(-1)[: int(np.prod(t.dims))]
        v = nib.astype(np.int64)
        if t.data_type == 22:
            v = np.where(v >= 8, v - 16, v)
        return v.reshape(tuple(t.dims))
    return numpy_helper.to_array(t).astype(np.int64)


def read(path, out):
    m = onnx.load(path)
    inits = {t.name: t for t in m.graph.initializer}
    found = {}
    for node in m.graph.node:
        if node.op_type != "DequantizeLinear":
            continue
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        axis = attrs.get("axis", 1)
        x = codes_of(inits[node.input[0]])
        scale = numpy_helper.to_array(inits[node.input[1]]).astype(np.float32)
        zp = codes_of(inits[node.input[2]]) if len(node.input) > 2 else np.zeros(scale.shape, np.int64)
        if attrs.get("block_size", 0):
            sys.exit(f"{node.output[0]}: blocked scales are not read here")
        shape = [1] * x.ndim
        if scale.ndim == 1:
            shape[axis] = scale.shape[0]
        y = ((x - zp.reshape(shape)).astype(np.float32) * scale.reshape(shape)).astype(np.float32)
        y.astype("<f4").tofile(os.path.join(out, node.output[0] + ".f32"))
        found[node.output[0]] = {"axis": axis, "codes_dims": list(x.shape), "scale_dims": list(scale.shape),
                                 "code_type": int(inits[node.input[0]].data_type)}
    opset = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
    with open(os.path.join(out, "qdq.json"), "w") as f:
        json.dump({"weights": found, "opset": opset[0] if opset else 0}, f)


if __name__ == "__main__":
    if sys.argv[1] == "model":
        model(sys.argv[2])
    elif sys.argv[1] == "read":
        read(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: qdq_view_fixtures.py model OUT.onnx | read EXPORT.onnx OUT_DIR")
