#!/usr/bin/env python3
"""ONNX models for tst_onnx, and what a reader must find in them (manifest.json beside them).

  onnx_fixtures.py OUT_DIR

Built with onnx.helper / the protobuf classes and numpy alone (no onnxruntime). Element types newer
than the installed onnx package (fp8, int4, uint4) are written by their TensorProto.DataType number.
Expected bytes are numpy's: little-endian, 4-bit values unpacked one per byte (int4 sign-extended),
and each QDQ weight's values computed as ONNX defines DequantizeLinear: (x - zero_point) * scale, f32.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import convert_onnx  # noqa: E402  (the converter's naming of subgraph tensors is the reference)
import io_make_onnx  # noqa: E402

F8E4M3FN, F8E5M2, UINT4, INT4 = 17, 19, 21, 22
rng = np.random.default_rng(14)
manifest = {"tensors": {}, "qdq": [], "bad": [], "external": {}}


def proto(name, data_type, dims, raw=None, **typed):
    t = TensorProto()
    t.name, t.data_type = name, data_type
    t.dims.extend(dims)
    if raw is not None:
        t.raw_data = raw
    for field, values in typed.items():
        getattr(t, field).extend(values)
    return t


def bf16_bits(f32):
    u = f32.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def pack4(values):
    """Two 4-bit values a byte, low nibble first; an odd count leaves the last high nibble 0."""
    v = (np.asarray(values, dtype=np.int64) & 0xF).astype(np.uint8)
    if v.size % 2:
        v = np.append(v, np.uint8(0))
    return (v[0::2] | (v[1::2] << 4)).astype(np.uint8)


def expect(file, name, dtype, shape, array):
    manifest["tensors"].setdefault(file, []).append(
        {"name": name, "dtype": dtype, "shape": list(shape), "hex": np.ascontiguousarray(array).tobytes().hex()})


def save(path, initializers, nodes=(), opset=13):
    graph = helper.make_graph(list(nodes), "g", [], [], initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, path)


def plain(out):
    inits = []

    def add(t, dtype, array):
        inits.append(t)
        expect("plain.onnx", t.name, dtype, list(t.dims), array)

    f32 = rng.standard_normal((3, 4)).astype(np.float32)
    add(proto("raw.f32", TensorProto.FLOAT, f32.shape, f32.tobytes()), "f32", f32)
    add(proto("typed.f32", TensorProto.FLOAT, f32.shape, float_data=f32.ravel().tolist()), "f32", f32)
    f16 = rng.standard_normal(5).astype(np.float16)
    add(proto("raw.f16", TensorProto.FLOAT16, [5], f16.tobytes()), "f16", f16)
    add(proto("typed.f16", TensorProto.FLOAT16, [5], int32_data=f16.view(np.uint16).tolist()), "f16", f16)
    bf = bf16_bits(rng.standard_normal((2, 3)))
    add(proto("raw.bf16", TensorProto.BFLOAT16, [2, 3], bf.tobytes()), "bf16", bf)
    add(proto("typed.bf16", TensorProto.BFLOAT16, [2, 3], int32_data=bf.ravel().tolist()), "bf16", bf)
    f64 = rng.standard_normal(2)
    add(proto("raw.f64", TensorProto.DOUBLE, [2], f64.tobytes()), "f64", f64)
    add(proto("typed.f64", TensorProto.DOUBLE, [2], double_data=f64.tolist()), "f64", f64)
    i8 = np.array([-128, -1, 0, 127], np.int8)
    add(proto("raw.int8", TensorProto.INT8, [4], i8.tobytes()), "int8", i8)
    add(proto("typed.int8", TensorProto.INT8, [4], int32_data=i8.tolist()), "int8", i8)
    u8 = np.array([0, 7, 255], np.uint8)
    add(proto("typed.uint8", TensorProto.UINT8, [3], int32_data=u8.tolist()), "uint8", u8)
    i16 = np.array([-32768, 5, 32767], np.int16)
    add(proto("typed.int16", TensorProto.INT16, [3], int32_data=i16.tolist()), "int16", i16)
    i32 = np.array([-7, 1 << 30], np.int32)
    add(proto("typed.int32", TensorProto.INT32, [2], int32_data=i32.tolist()), "int32", i32)
    i64 = np.array([-(1 << 40), 3], np.int64)
    add(proto("typed.int64", TensorProto.INT64, [2], int64_data=i64.tolist()), "int64", i64)
    add(proto("raw.int64", TensorProto.INT64, [2], i64.tobytes()), "int64", i64)
    b = np.array([True, False, True])
    add(proto("typed.bool", TensorProto.BOOL, [3], int32_data=[1, 0, 5]), "bool", b.astype(np.uint8))
    i4 = np.array([-8, -1, 0, 7, 3], np.int8)
    add(proto("raw.int4", INT4, [5], pack4(i4).tobytes()), "int8", i4)
    add(proto("typed.int4", INT4, [5], int32_data=pack4(i4).tolist()), "int8", i4)
    u4 = np.array([15, 0, 9], np.uint8)
    add(proto("raw.uint4", UINT4, [3], pack4(u4).tobytes()), "uint8", u4)
    e4 = np.array([0x00, 0x38, 0xB8, 0x7E], np.uint8)  # 0, 1, -1, 448
    add(proto("raw.fp8e4m3", F8E4M3FN, [4], e4.tobytes()), "fp8-e4m3", e4)
    e5 = np.array([0x3C, 0xC0, 0x7B], np.uint8)  # 1, -2, 57344
    add(proto("typed.fp8e5m2", F8E5M2, [3], int32_data=e5.tolist()), "fp8-e5m2", e5)
    add(proto("empty", TensorProto.FLOAT, [0, 3], b""), "f32", np.zeros((0, 3), np.float32))
    inits.append(proto("text", TensorProto.STRING, [1], string_data=[b"not a weight"]))  # not listed
    save(os.path.join(out, "plain.onnx"), inits)


def subgraphs(out):
    """io_make_onnx.py's model (Constants, If branches), and a Loop body with an initializer and a
    nested unnamed If: names and values must be what convert_onnx.py writes."""
    io_make_onnx.main(os.path.join(out, "subgraphs.onnx"))

    def if_node(depth):
        inner = helper.make_graph([], "inner", [], [], initializer=[
            proto("deep_w%d" % depth, TensorProto.FLOAT, [2], np.array([depth, -depth], np.float32).tobytes())])
        return helper.make_node("If", ["cond"], [], then_branch=inner, else_branch=inner)

    body = helper.make_graph(
        [helper.make_node("Constant", [], ["body_c"], value_ints=[4, 5]), if_node(1)], "body", [], [],
        initializer=[proto("body_w", TensorProto.FLOAT16, [2, 2], np.arange(4, dtype=np.float16).tobytes())])
    nodes = [helper.make_node("Constant", [], ["cond"], value_int=1),
             helper.make_node("Loop", ["", "cond"], [], body=body),
             helper.make_node("Constant", [], ["pi"], value_float=3.25)]
    save(os.path.join(out, "loop.onnx"), [], nodes)
    for file in ("subgraphs.onnx", "loop.onnx"):
        for name, value in convert_onnx.weights(os.path.join(out, file), 1):
            dtype = {"F32": "f32", "F16": "f16", "I64": "int64", "BOOL": "bool"}[
                convert_onnx.SAFETENSORS[value.dtype.newbyteorder("=")]]
            expect(file, name, dtype, value.shape, value.astype(value.dtype.newbyteorder("<")))


def external(out):
    w = rng.standard_normal((4, 3)).astype(np.float32)
    secret = os.path.join(out, "secret.bin")  # outside every model folder below
    with open(secret, "wb") as f:
        f.write(w.tobytes())

    def model(folder, location, offset=None, length=None, data=None, dims=(4, 3)):
        d = os.path.join(out, folder)
        os.makedirs(d, exist_ok=True)
        if data is not None:
            with open(os.path.join(d, "weights.bin"), "wb") as f:
                f.write(data)
        t = proto("ext.w", TensorProto.FLOAT, list(dims))
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", offset), ("length", length)):
            if v is not None:
                e = t.external_data.add()
                e.key, e.value = k, str(v)
        save(os.path.join(d, "model.onnx"), [t])
        return os.path.join(folder, "model.onnx")

    padded = b"\0" * 64 + w.tobytes() + b"\0" * 8
    ok = model("ext_ok", "weights.bin", 64, w.nbytes, padded)
    model("ext_ok", "sub/../weights.bin", 64, None)  # stays inside: same file, path normalised
    os.rename(os.path.join(out, "ext_ok", "model.onnx"), os.path.join(out, "ext_ok", "normalised.onnx"))
    ok = model("ext_ok", "weights.bin", 64, w.nbytes)
    # At an odd byte: the format allows any offset, and the values must still come out whole.
    odd = model("ext_odd", "weights.bin", 1, w.nbytes, b"\0" + w.tobytes())
    manifest["external"] = {"ok": [ok, os.path.join("ext_ok", "normalised.onnx"), odd],
                            "hex": w.tobytes().hex()}

    def bad(folder, tensor, reason, **kw):
        manifest["bad"].append({"file": model(folder, **kw), "tensor": tensor, "reason": reason})

    bad("ext_escape", "ext.w", "leaves the model's folder", location="../secret.bin", data=padded)
    bad("ext_absolute", "ext.w", "absolute path", location=secret, data=padded)
    bad("ext_past_end", "ext.w", "lies outside", location="weights.bin", offset=len(padded), data=padded)
    bad("ext_short", "ext.w", "lies outside", location="weights.bin", offset=80, data=padded)
    bad("ext_length", "ext.w", "does not match the shape", location="weights.bin", length=7, data=padded)
    bad("ext_offset_text", "ext.w", "not a non-negative integer", location="weights.bin", offset="-4", data=padded)
    bad("ext_missing", "ext.w", "cannot be opened", location="nothing.bin")
    os.makedirs(os.path.join(out, "ext_symlink"), exist_ok=True)
    os.symlink(secret, os.path.join(out, "ext_symlink", "weights.bin"))
    bad("ext_symlink", "ext.w", "outside the model's folder", location="weights.bin")


def qdq(out):
    """DequantizeLinear over initializers, named as onnxruntime's quantizer names them."""
    inits, nodes = [], []

    def add(weight, codes, codes_type, codes_bytes, scale, zp, zp_bytes, shape, axis=None, block=0, scheme=""):
        q, s, z = weight + "_quantized", weight + "_scale", weight + "_zero_point"
        out_name = weight + "_DequantizeLinear_Output"
        inits.append(proto(q, codes_type, shape, codes_bytes))
        inits.append(proto(s, TensorProto.FLOAT, scale.shape, scale.astype(np.float32).tobytes()))
        inputs = [q, s]
        if zp is not None:
            inits.append(proto(z, codes_type, zp.shape, zp_bytes))
            inputs.append(z)
        attrs = {}
        if axis is not None:
            attrs["axis"] = axis
        if block:
            attrs["block_size"] = block
        nodes.append(helper.make_node("DequantizeLinear", inputs, [out_name], weight + "_DequantizeLinear", **attrs))
        # The reference: broadcast scale / zero point over x as DequantizeLinear does, then (x - zp) * s in f32.
        x = codes.astype(np.int64)
        s_full, z_full = scale.astype(np.float32), (zp if zp is not None else np.zeros_like(scale)).astype(np.int64)
        a = (axis if axis is not None else 1) % len(shape) if len(shape) else 0
        if block:
            s_full, z_full = np.repeat(s_full, block, axis=a), np.repeat(z_full, block, axis=a)
            s_full = np.take(s_full, range(shape[a]), axis=a)
            z_full = np.take(z_full, range(shape[a]), axis=a)
        elif scale.ndim == 1 and scale.size > 1:
            view = [1] * len(shape)
            view[a] = shape[a]
            s_full, z_full = s_full.reshape(view), z_full.reshape(view)
        y = (x - z_full).astype(np.float32) * s_full
        manifest["qdq"].append({
            "name": out_name, "codes": q, "scale": s, "zero_point": z if zp is not None else "",
            "scheme": scheme, "axis": a if scheme != "per-tensor" else 0, "block": block, "shape": list(shape),
            "hex": y.astype(np.float32).tobytes().hex(),
            "codes_hex": codes.astype(np.int8 if codes.dtype.kind == "i" else np.uint8).tobytes().hex()
            if codes.dtype.itemsize == 1 else codes.tobytes().hex(),
            "scale_hex": scale.astype(np.float32).tobytes().hex(),
            "zero_point_hex": "" if zp is None else zp.astype(zp.dtype).tobytes().hex()})

    x = rng.integers(-128, 128, (4, 6)).astype(np.int8)
    add("W", x, TensorProto.INT8, x.tobytes(), np.array(0.0137, np.float32), np.array(3, np.int8),
        np.array(3, np.int8).tobytes(), [4, 6], scheme="per-tensor")
    u = rng.integers(0, 256, (3, 5)).astype(np.uint8)
    zp = np.array([128, 0, 255], np.uint8)
    add("conv", u, TensorProto.UINT8, u.tobytes(), np.array([0.5, 0.031, 2.0e-3], np.float32), zp, zp.tobytes(),
        [3, 5], axis=0, scheme="per-axis 0")
    d = rng.integers(-128, 128, (2, 4)).astype(np.int8)  # default axis 1, no zero point
    add("fc", d, TensorProto.INT8, d.tobytes(), (rng.random(4) + 0.1).astype(np.float32), None, None, [2, 4],
        scheme="per-axis 1")
    i4 = rng.integers(-8, 8, (3, 7)).astype(np.int8)  # 21 codes: the last byte half empty
    z4 = rng.integers(-8, 8, (3, 2)).astype(np.int8)
    add("blk", i4, INT4, pack4(i4.ravel()).tobytes(), (rng.random((3, 2)) + 0.01).astype(np.float32), z4,
        pack4(z4.ravel()).tobytes(), [3, 7], axis=1, block=4, scheme="block 4 along axis 1")
    b32 = np.array([-100000, 5, 70000], np.int32)  # a bias as the quantizer stores it: int32, no zero point
    add("bias", b32, TensorProto.INT32, b32.tobytes(), np.array(1.5e-4, np.float32), None, None, [3],
        scheme="per-tensor")
    save(os.path.join(out, "qdq.onnx"), inits, nodes, opset=21)
    # The float model the QDQ one was made from, for `diff`.
    save(os.path.join(out, "float.onnx"), [proto("W", TensorProto.FLOAT, [4, 6], (
        (x.astype(np.float32) - 3) * np.float32(0.0137)).astype(np.float32).tobytes())])


def bad_files(out):
    def bad(file, tensor, reason, data=None, inits=None, nodes=()):
        path = os.path.join(out, file)
        if data is not None:
            with open(path, "wb") as f:
                f.write(data)
        else:
            save(path, inits or [], nodes, opset=21)
        manifest["bad"].append({"file": file, "tensor": tensor, "reason": reason})

    big = rng.standard_normal(4096).astype(np.float32)
    save(os.path.join(out, "whole.onnx"), [proto("big", TensorProto.FLOAT, [4096], big.tobytes())])
    whole = open(os.path.join(out, "whole.onnx"), "rb").read()
    bad("truncated.onnx", "", "not a valid ONNX model", data=whole[: len(whole) // 2])
    bad("garbage.onnx", "", "not a valid ONNX model", data=bytes(rng.integers(0, 256, 4096, dtype=np.uint8)))
    bad("empty.onnx", "", "empty file", data=b"")
    no_graph = onnx.ModelProto()
    no_graph.ir_version = 8
    bad("nograph.onnx", "", "no graph", data=no_graph.SerializeToString())
    bad("lying_raw.onnx", "w", "raw_data holds 12 bytes", inits=[proto("w", TensorProto.FLOAT, [4], b"\0" * 12)])
    bad("lying_typed.onnx", "w", "float_data holds 3 values",
        inits=[proto("w", TensorProto.FLOAT, [4], float_data=[1, 2, 3])])
    bad("unknown_type.onnx", "w", "unknown ONNX data type 99", inits=[proto("w", 99, [1], b"\0")])
    bad("negative_dim.onnx", "w", "negative", inits=[proto("w", TensorProto.FLOAT, [-1, 2], b"")])
    bad("overflow_dims.onnx", "w", "overflows",
        inits=[proto("w", TensorProto.FLOAT, [1 << 40, 1 << 40], b"")])
    # A zero dimension makes no elements, but strides still multiply the others.
    bad("zero_beside_overflow.onnx", "w", "overflows",
        inits=[proto("w", TensorProto.FLOAT, [0, 1 << 40, 1 << 40], b"")])
    bad("empty_name.onnx", "", "has an empty name", inits=[proto("", TensorProto.FLOAT, [1], b"\0" * 4)])
    bad("both_fields.onnx", "w", "both raw_data and a typed", inits=[proto("w", TensorProto.FLOAT, [1], b"\0" * 4,
                                                                         float_data=[1.0])])
    bad("duplicate.onnx", "w", "two tensors have this name",
        inits=[proto("w", TensorProto.FLOAT, [1], b"\0" * 4), proto("w", TensorProto.FLOAT, [1], b"\0" * 4)])
    bad("qdq_scale_shape.onnx", "x_out", "per-axis scale", inits=[
        proto("x", TensorProto.INT8, [2, 3], b"\0" * 6), proto("s", TensorProto.FLOAT, [2], b"\0" * 8)],
        nodes=[helper.make_node("DequantizeLinear", ["x", "s"], ["x_out"], axis=1)])
    bad("qdq_block_shape.onnx", "x_out", "blocked scale", inits=[
        proto("x", TensorProto.INT8, [2, 6], b"\0" * 12), proto("s", TensorProto.FLOAT, [2, 3], b"\0" * 24)],
        nodes=[helper.make_node("DequantizeLinear", ["x", "s"], ["x_out"], axis=1, block_size=4)])
    deep = helper.make_graph([], "leaf", [], [])
    for _ in range(40):
        deep = helper.make_graph([helper.make_node("If", ["c"], [], then_branch=deep)], "g", [], [])
    bad("deep.onnx", "", "nested deeper", data=helper.make_model(deep).SerializeToString())


def main(out):
    os.makedirs(out, exist_ok=True)
    plain(out)
    subgraphs(out)
    external(out)
    qdq(out)
    bad_files(out)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1])
