"""Fixtures for tests/tst_evaluate.cpp.

  evaluate_fixtures.py transformer OUT.onnx        a small transformer encoder, exported by PyTorch's ONNX exporter
  evaluate_fixtures.py mlp OUT.onnx                two Linear layers (Gemm, weights [out, in]), opset 14
  evaluate_fixtures.py badop OUT.onnx              a valid ONNX model with an operator no runtime has
  evaluate_fixtures.py inputs OUT_PREFIX NAME DTYPE N D0,D1,...
      N samples of input NAME (x[i] = sin(i * 0.001 + k), sample k): OUT_PREFIX.npz (np.savez, first axis the
      samples) and OUT_PREFIX.<k>.bin (one sample's raw little-endian bytes, for the Node peer)
  evaluate_fixtures.py taps MODEL OUT.onnx OUT.json
      the model with the data input of each weight's first consumer (Conv, MatMul, Gemm) as a graph output,
      and what each weight reads: {weight: {input, axis, channels, filters, output}}
  evaluate_fixtures.py check-activations TAPS.json STATS.safetensors INPUT D0,D1,... INPUTS_PREFIX PEER...
      E[x^2] per input channel computed with numpy from the Node peer's outputs (PEER_k.<name>.bin for
      sample k; the graph input INPUT from INPUTS_PREFIX.<k>.bin) equals STATS' <weight>.input_sq_mean
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


def taps(model, out, out_json):
    import json

    import onnx

    m = onnx.load(model)
    g = m.graph
    shapes = {t.name: list(t.dims) for t in g.initializer if t.data_type == onnx.TensorProto.FLOAT}
    for n in g.node:
        if n.op_type == "Constant" and n.attribute[0].t.data_type == onnx.TensorProto.FLOAT:
            shapes[n.output[0]] = list(n.attribute[0].t.dims)
    graph_inputs = {i.name for i in g.input}
    found = {}
    for n in g.node:
        attrs = {a.name: a.i for a in n.attribute if a.type == onnx.AttributeProto.INT}
        for k, w in enumerate(n.input):
            if w not in shapes or len(shapes[w]) < 2 or w in found:
                continue
            dims = shapes[w]
            if n.op_type == "Conv" and k == 1:
                group = attrs.get("group", 1)
                depthwise = group != 1 and dims[1] == 1
                found[w] = {"input": n.input[0], "axis": 1, "channels": dims[1] * group,
                            "filters": dims[0] if depthwise else 0}
            elif n.op_type == "MatMul" and k == 1:
                found[w] = {"input": n.input[0], "axis": -1, "channels": dims[-2], "filters": 0}
            elif n.op_type == "Gemm" and k == 1 and not attrs.get("transA", 0):
                found[w] = {"input": n.input[0], "axis": -1,
                            "channels": dims[1] if attrs.get("transB", 0) else dims[0], "filters": 0}
            else:
                found[w] = None
    found = {w: t for w, t in found.items() if t}
    # Each node input tapped through an Identity named tap<k>: a file name whatever the input's name.
    taps = {}
    for t in found.values():
        if t["input"] not in graph_inputs:
            if t["input"] not in taps:
                taps[t["input"]] = f"tap{len(taps)}"
                g.node.append(onnx.helper.make_node("Identity", [t["input"]], [taps[t["input"]]]))
                g.output.add().name = taps[t["input"]]
            t["output"] = taps[t["input"]]
    onnx.save(m, out)
    with open(out_json, "w") as f:
        json.dump(found, f)


def check_activations(taps_json, stats, input_name, dims, inputs_prefix, *peers):
    import json
    import struct

    with open(taps_json) as f:
        found = json.load(f)
    with open(stats, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    got = {}
    for name, t in header.items():
        if name != "__metadata__":
            a, b = t["data_offsets"]
            got[name] = np.frombuffer(data[a:b], dtype=np.float32)
    shape = [int(d) for d in dims.split(",")]
    bad = []
    for w, t in found.items():
        sums, count = 0, 0
        for k, peer in enumerate(peers):
            path = f"{inputs_prefix}.{k}.bin" if t["input"] == input_name else f"{peer}.{t['output']}.bin"
            x = np.fromfile(path, dtype=np.float32).astype(np.float64)
            c = t["channels"]
            if t["axis"] == 1:  # [batch, C, ...], the batch of one sample being shape[0]
                x = np.moveaxis(x.reshape(shape[0], c, -1), 1, 0).reshape(c, -1)
            else:  # [..., C]
                x = x.reshape(-1, c).T
            sums = sums + (x * x).sum(axis=1)
            count += x.shape[1]
        want = sums / count
        if t["filters"]:
            want = np.repeat(want, t["filters"] // c)
        module = w[:-len(".weight")] if w.endswith(".weight") and len(w) > 7 else w
        have = got.get(module + ".input_sq_mean")
        if have is None or have.shape != want.shape or not np.allclose(have, want, rtol=1e-5, atol=1e-12):
            bad.append(f"{w}: {None if have is None else have[:4]} != {want[:4]}")
    if bad or len(got) != len(found):
        sys.exit(f"{len(bad)} of {len(found)} weights differ ({len(got)} entries): " + "; ".join(bad[:5]))
    print(f"{len(found)} weights match")


if __name__ == "__main__":
    {"transformer": transformer, "mlp": mlp, "badop": badop, "inputs": inputs, "taps": taps,
     "check-activations": check_activations}[sys.argv[1]](*sys.argv[2:])
