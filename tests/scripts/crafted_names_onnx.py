#!/usr/bin/env python3
"""ONNX models whose external-data locations carry terminal escape sequences (tst_crafted_names).

  crafted_names_onnx.py OUT_DIR

  stored.onnx   one f32 [2, 2] initializer whose data is in "d<ESC>[31m.bin" beside it (written too)
  missing.onnx  the same, its data in "w<ESC>]0;pwned<BEL>.bin", which does not exist
"""
import os
import sys

import onnx
from onnx import TensorProto, helper


def model(path, location):
    t = TensorProto()
    t.name, t.data_type = "w", TensorProto.FLOAT
    t.dims.extend([2, 2])
    t.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", "0"), ("length", "16")):
        e = t.external_data.add()
        e.key, e.value = key, value
    graph = helper.make_graph([], "g", [], [], initializer=[t])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    with open(path, "wb") as f:
        f.write(m.SerializeToString())


def main():
    out = sys.argv[1]
    stored = "d\x1b[31m.bin"
    with open(os.path.join(out, stored), "wb") as f:
        f.write(bytes(16))
    model(os.path.join(out, "stored.onnx"), stored)
    model(os.path.join(out, "missing.onnx"), "w\x1b]0;pwned\x07.bin")
    assert onnx.__version__


if __name__ == "__main__":
    main()
