"""Fixtures for tests/tst_evaluate.cpp (issue 42).

  evaluate_fixtures.py transformer OUT.onnx        a small transformer encoder, exported by PyTorch's ONNX exporter
  evaluate_fixtures.py mlp OUT.onnx                two Linear layers (Gemm, weights [out, in]), opset 14
  evaluate_fixtures.py badop OUT.onnx              a valid ONNX model with an operator no runtime has
  evaluate_fixtures.py inputs OUT_PREFIX NAME DTYPE N D0,D1,...
      N samples of input NAME (x[i] = sin(i * 0.001 + k), sample k): OUT_PREFIX.npz (np.savez, first axis the
      samples) and OUT_PREFIX.<k>.bin (one sample's raw little-endian bytes, for the Node peer)
"""
import sys

import numpy as np


def transformer(out):
    import torch

    torch.manual_seed(7)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Linear(16, 32)
            self.encoder = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
            self.head = torch.nn.Linear(32, 10)

        def forward(self, x):
            return self.head(self.encoder(self.embed(x)))

    model = Model().eval()
    torch.onnx.export(model, torch.randn(1, 8, 16), out, input_names=["features"], output_names=["logits"],
                      dynamic_axes={"features": {0: "batch", 1: "tokens"}}, opset_version=14)


def mlp(out):
    import torch

    torch.manual_seed(11)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).eval()
    torch.onnx.export(model, torch.randn(1, 32), out, input_names=["features"], output_names=["logits"],
                      dynamic_axes={"features": {0: "batch"}}, opset_version=14)


def badop(out):
    import onnx
    from onnx import TensorProto, helper

    w = helper.make_tensor("w", TensorProto.FLOAT, [4, 4], np.arange(16, dtype=np.float32).tolist())
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("NoSuchOperator", ["y"], ["z"])],
        "badop", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 4])], [w])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), out)


def inputs(prefix, name, dtype, n, dims):
    shape = [int(d) for d in dims.split(",")]
    count = int(np.prod(shape))
    samples = [np.sin(np.arange(count, dtype=np.float64) * 0.001 + k).astype(dtype).reshape(shape)
               for k in range(int(n))]
    np.savez(prefix + ".npz", **{name: np.stack(samples)})
    for k, s in enumerate(samples):
        s.tofile(f"{prefix}.{k}.bin")


if __name__ == "__main__":
    {"transformer": transformer, "mlp": mlp, "badop": badop, "inputs": inputs}[sys.argv[1]](*sys.argv[2:])
