#!/usr/bin/env python3
"""An ONNX model with one weight per role the role table knows, each consumed by its operator:
MatMul [in, out], Gemm with transB=1 [out, in] and transB=0 [in, out], Conv 3x3, a 1x1 conv,
a depthwise conv (group = channels), ConvTranspose, GRU W and R, Gather (embedding) and a bias.
The graph is never run; the shapes and consumers are what the reader must see.

  weight_roles_onnx.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(path):
    rng = np.random.default_rng(39)
    w = {
        "mm.w": (64, 48),        # MatMul input 1: [in, out]
        "gemm_t.w": (40, 64),    # Gemm transB=1: [out, in]
        "gemm_n.w": (64, 40),    # Gemm transB=0: [in, out]
        "conv3.w": (16, 64, 3, 3),
        "conv1.w": (32, 64, 1, 1),
        "dw.w": (64, 1, 3, 3),   # group 64
        "deconv.w": (64, 8, 2, 2),
        "gru.W": (1, 3 * 16, 64),
        "gru.R": (1, 3 * 16, 16),
        "emb.w": (100, 64),
        "conv3.b": (16,),
    }
    inits = [numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n) for n, s in w.items()]
    nodes = [
        helper.make_node("MatMul", ["x", "mm.w"], ["a"]),
        helper.make_node("Gemm", ["x", "gemm_t.w"], ["b"], transB=1),
        helper.make_node("Gemm", ["x", "gemm_n.w"], ["c"], transB=0),
        helper.make_node("Conv", ["img", "conv3.w", "conv3.b"], ["d"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["img", "conv1.w"], ["e"]),
        helper.make_node("Conv", ["img", "dw.w"], ["f"], group=64, pads=[1, 1, 1, 1]),
        helper.make_node("ConvTranspose", ["img", "deconv.w"], ["g"], strides=[2, 2]),
        helper.make_node("GRU", ["seq", "gru.W", "gru.R"], ["h"], hidden_size=16),
        helper.make_node("Gather", ["emb.w", "ids"], ["i"]),
    ]
    graph = helper.make_graph(
        nodes, "roles",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 64]),
         helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 64, 8, 8]),
         helper.make_tensor_value_info("seq", TensorProto.FLOAT, [5, 1, 64]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, [3])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, []) for o in "abcdefghi"],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == "__main__":
    main(sys.argv[1])
