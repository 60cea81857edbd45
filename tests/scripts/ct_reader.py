#!/usr/bin/env python3
"""An independent compressed-tensors reader: reads config.json's quantization_config and a safetensors
export, unpacks and dequantizes every quantized module the way compressed-tensors 0.12.2 does
(PackedQuantizationCompressor / NaiveQuantizationCompressor / NVFP4PackedCompressor decompress_weight,
then lifecycle/forward.py dequantize with no args, so the strategy follows the scale's shape), and
writes the dequantized weights x̂ to a safetensors file in the dtype the library produces.

Written from the library's sources, not importing it. Needs numpy and torch (1.13 is enough: FP8 and
FP4 are decoded here by table, which is exact in every dtype the library converts them to).

    ct_reader.py dequantize EXPORT.safetensors OUT.safetensors   -> prints a JSON summary per module
"""
import json
import math
import os
import re
import struct
import sys

import numpy as np
import torch

ST_DTYPES = {
    "F32": (np.float32, torch.float32), "F16": (np.float16, torch.float16), "BF16": (np.uint16, torch.bfloat16),
    "I8": (np.int8, torch.int8), "U8": (np.uint8, torch.uint8), "I32": (np.int32, torch.int32),
    "I64": (np.int64, torch.int64), "F8_E4M3": (np.uint8, None),
}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        np_dtype, torch_dtype = ST_DTYPES[info["dtype"]]
        begin, end = info["data_offsets"]
        arr = np.frombuffer(data[base + begin:base + end], dtype=np_dtype).reshape(info["shape"]).copy()
        if info["dtype"] == "BF16":
            t = torch.from_numpy(arr.astype(np.int16)).view(torch.bfloat16)
        elif info["dtype"] == "F8_E4M3":
            t = ("F8_E4M3", arr)  # decoded where the library converts it
        else:
            t = torch.from_numpy(arr)
        out[name] = t
    return out


def e4m3_to_f32(codes):
    """OCP E4M3FN: bias 7, no infinities, S.1111.111 is NaN."""
    c = codes.astype(np.int32)
    sign = np.where(c & 0x80, -1.0, 1.0)
    e = (c >> 3) & 0xF
    m = c & 0x7
    val = np.where(e == 0, m / 8.0 * 2.0 ** -6, (1.0 + m / 8.0) * np.power(2.0, e - 7))
    val = np.where((e == 15) & (m == 7), np.nan, val)
    return torch.from_numpy((sign * val).astype(np.float32))


def as_tensor(t):
    return e4m3_to_f32(t[1]) if isinstance(t, tuple) else t


# pack_quantized.py: unpack_from_int32
def unpack_from_int32(value, num_bits, shape, packed_dim=1):
    assert value.dtype == torch.int32, "weight_packed must be int32"
    pack_factor = 32 // num_bits
    mask = (1 << num_bits) - 1
    if packed_dim == 1:
        unpacked = torch.zeros((value.shape[0], value.shape[1] * pack_factor), dtype=torch.int32)
        for i in range(pack_factor):
            unpacked[:, i::pack_factor] = (value >> (num_bits * i)) & mask
        unpacked = unpacked[:, :int(shape[1])]
    else:
        unpacked = torch.zeros((value.shape[0] * pack_factor, value.shape[1]), dtype=torch.int32)
        for i in range(pack_factor):
            unpacked[i::pack_factor, :] = (value >> (num_bits * i)) & mask
        unpacked = unpacked[:int(shape[0]), :]
    return (unpacked - (2 ** num_bits) // 2).to(torch.int8)


E2M1 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=torch.float32)


# fp4_quantized.py: unpack_fp4_from_uint8 (low nibble first, bf16 by default)
def unpack_fp4_from_uint8(a, m, n, dtype=torch.bfloat16):
    assert a.dtype == torch.uint8, "weight_packed must be uint8"
    flat = a.flatten()
    combined = torch.stack(((flat & 0x0F), (flat & 0xF0) >> 4), dim=1).flatten()
    signs = (combined & 0x08).to(torch.bool)
    values = E2M1[(combined & 0x07).to(torch.long)] * torch.where(signs, -1.0, 1.0)
    return values.reshape(m, n).to(dtype=dtype)


# mxfp4_utils.py: convert_mxfp4_exp_scale
def convert_mxfp4_exp_scale(scale, dtype=torch.bfloat16):
    assert scale.dtype == torch.uint8
    return (2.00 ** ((scale.to(torch.int32) - 127).to(torch.float))).to(dtype)


def _dequantize(x_q, scale, zero_point=None, global_scale=None):
    if global_scale is not None:
        scale = scale.to(global_scale.dtype) / global_scale
    v = x_q.to(scale.dtype)
    if zero_point is not None:
        v = v - zero_point.to(scale.dtype)
    return v * scale


# forward.py: dequantize(x_q, scale, zero_point, args=None) -> _process_quantization(do_dequantize only)
def dequantize(x_q, scale, zero_point=None, dtype=None, global_scale=None):
    if scale.ndim in (0, 1):
        strategy = ("tensor",)
    elif scale.ndim == 2:
        if scale.shape[1] == 1:
            strategy = ("channel",)
        elif scale.shape[0] == 1 or scale.shape[0] == x_q.shape[0]:
            strategy = ("group", int(x_q.shape[1] / scale.shape[1]))
        else:
            strategy = ("block", x_q.shape[-2] // scale.shape[0], x_q.shape[-1] // scale.shape[1])
    else:
        raise ValueError("cannot infer a strategy from a scale of %d dims" % scale.ndim)
    if dtype is None:
        dtype = scale.dtype
    if strategy[0] == "block":
        rows, cols = x_q.shape[-2], x_q.shape[-1]
        bh, bw = strategy[1], strategy[2]
        if rows % bh or cols % bw:
            raise ValueError("block quantization requires exact division")
        xb = x_q.reshape(rows // bh, bh, cols // bw, bw).transpose(1, 2)
        zb = zero_point.unsqueeze(-1).unsqueeze(-1) if zero_point is not None else None
        out = _dequantize(xb, scale.unsqueeze(-1).unsqueeze(-1), zb, global_scale).to(dtype)
        return out.transpose(1, 2).reshape(x_q.shape)
    if strategy[0] == "group":
        group_size = strategy[1]
        columns = x_q.shape[-1]
        while scale.ndim < 2:
            scale = scale.unsqueeze(1)
            zero_point = zero_point.unsqueeze(1) if zero_point is not None else None
        if columns >= group_size and columns % group_size != 0:
            raise ValueError("columns must be divisible by group_size")
        x = x_q.unflatten(-1, (math.ceil(columns / group_size), group_size))
        zp = zero_point.unsqueeze(-1) if zero_point is not None else None
        out = _dequantize(x, scale.unsqueeze(-1), zp, global_scale)
        return out.flatten(start_dim=-2).to(dtype)
    return _dequantize(x_q, scale, zero_point, global_scale).to(dtype)


def match(name, target):
    if target.startswith("re:"):
        return re.match(target[3:], name) is not None
    return target == name


def decompress(module, tensors, scheme, fmt):
    args = scheme["weights"]
    get = lambda key: tensors.get(module + "." + key)
    scale = as_tensor(get("weight_scale"))
    zp = get("weight_zero_point")
    asym_packed = not args["symmetric"] and args["strategy"] in ("group", "channel")
    if fmt in ("int-quantized", "float-quantized", "naive-quantized"):
        w = get("weight")
        if fmt == "int-quantized":
            assert w.dtype == torch.int8, "int-quantized weight must be int8"
        else:
            assert isinstance(w, tuple), "float-quantized weight must be F8_E4M3"
        return dequantize(as_tensor(w), scale, zp)
    if fmt == "pack-quantized":
        shape = tuple(int(v) for v in get("weight_shape").tolist())
        unpacked = unpack_from_int32(get("weight_packed"), args["num_bits"], shape)
        if asym_packed:
            assert zp is not None, "asymmetric quantization requires zero points"
            zp = unpack_from_int32(zp, args["num_bits"], (shape[0], scale.shape[-1]), packed_dim=0)
        return dequantize(unpacked, scale, zp)
    if fmt in ("nvfp4-pack-quantized", "mxfp4-pack-quantized"):
        packed = get("weight_packed")
        m, n = packed.shape
        unpacked = unpack_fp4_from_uint8(packed, m, n * 2)
        g = get("weight_global_scale")
        if g is None and scale.dtype == torch.uint8:  # MXFP4: E8M0 exponents
            scale = convert_mxfp4_exp_scale(scale)
        return dequantize(unpacked, scale, global_scale=g, dtype=unpacked.dtype)
    raise ValueError("unknown format " + fmt)


def to_numpy(t):
    if t.dtype == torch.bfloat16:
        return t.contiguous().view(torch.int16).numpy().view(np.uint16), "BF16"
    if t.dtype == torch.float16:
        return t.numpy(), "F16"
    return t.to(torch.float32).numpy(), "F32"


def write_safetensors(path, named):
    header, blobs, offset = {}, [], 0
    for name, t in named.items():
        arr, dt = to_numpy(t)
        raw = np.ascontiguousarray(arr).tobytes()
        header[name] = {"dtype": dt, "shape": list(arr.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def main():
    if len(sys.argv) != 4 or sys.argv[1] != "dequantize":
        sys.exit(__doc__)
    export, out = sys.argv[2], sys.argv[3]
    with open(os.path.join(os.path.dirname(os.path.abspath(export)), "config.json")) as f:
        qc = json.load(f)["quantization_config"]
    assert qc["quant_method"] == "compressed-tensors"
    tensors = read_safetensors(export)
    modules = sorted({k[:-len(".weight_scale")] for k in tensors if k.endswith(".weight_scale")})
    results, summary = {}, {}
    for module in modules:
        if any(match(module, t) for t in qc.get("ignore", [])):
            continue
        schemes = [s for s in qc["config_groups"].values() if any(match(module, t) for t in s["targets"])]
        if len(schemes) != 1:
            raise ValueError("%s matches %d config groups" % (module, len(schemes)))
        fmt = schemes[0].get("format") or qc["format"]
        x = decompress(module, tensors, schemes[0], fmt)
        results[module + ".weight"] = x
        summary[module] = {"format": fmt, "dtype": str(x.dtype).replace("torch.", ""), "shape": list(x.shape)}
    write_safetensors(out, results)
    print(json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    main()
