#!/usr/bin/env python3
"""A tiny ONNX model whose weights sit where real exports put them: an initializer, Constant nodes
(tensor, value_floats and value_int forms) and Constants inside both branches of an If subgraph.

  io_make_onnx.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def branch(name, value):
    c = helper.make_node("Constant", [], [name + "_w"], value=numpy_helper.from_array(value, name + "_w"))
    out = helper.make_node("Identity", [name + "_w"], [name + "_out"])
    return helper.make_graph([c, out], name, [], [helper.make_tensor_value_info(name + "_out", TensorProto.FLOAT, [None, None])])


def main(path):
    init = numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "fc.weight")
    nodes = [
        helper.make_node("Constant", [], ["conv.weight"],
                         value=numpy_helper.from_array(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 1, 2, 2))),
        helper.make_node("Constant", [], ["scale.floats"], value_floats=[0.5, 1.5, 2.5]),
        helper.make_node("Constant", [], ["axis.int"], value_int=1),
        helper.make_node("Constant", [], ["cond"], value=numpy_helper.from_array(np.array(True))),
        helper.make_node("If", ["cond"], ["y"], name="gate",
                         then_branch=branch("then", np.full((2, 2), 3.0, np.float32)),
                         else_branch=branch("else", np.array([[-1.0, 2.0]], np.float32))),
    ]
    graph = helper.make_graph(nodes, "subgraphs", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None])],
                              initializer=[init])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == "__main__":
    main(sys.argv[1])
