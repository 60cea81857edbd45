#!/usr/bin/env python3
"""A float ONNX model and QDQ versions of it, for `diff`'s code comparison (tst_diff_codes).

  diff_codes_fixtures.py OUT_DIR

qdq.onnx quantizes fc.weight as onnxruntime's quantizer does for a per-channel symmetric int8 weight
(onnxruntime/python/tools/quantization/quant_utils.py: get_qmin_qmax_for_qType gives [-127, 127] when
symmetric; compute_scale_zp: scale = (rmax - rmin) / (qmax - qmin) with rmax = -rmin = absmax, in
float32; quantize_nparray: (x / scale).round() + zero_point, numpy's half-to-even, clipped), with
zero points of 0 stored, and names W_quantized, W_scale, W_zero_point, W_DequantizeLinear_Output.
Some weights are put on exact midpoints of their row's grid, where dividing by the scale (onnxruntime)
and multiplying by its float32 reciprocal (torch) round differently; manifest.json gives the count.
qdq_edited.onnx changes three codes and one scale; qdq_uint8.onnx is asymmetric uint8 per-tensor.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROWS, COLS = 8, 64
rng = np.random.default_rng(2026)


def save(path, inits, nodes=()):
    graph = helper.make_graph(list(nodes), "g", [], [], initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, path)


def qdq_model(path, codes, scale, zp, axis):
    attrs = {} if axis is None else {"axis": axis}
    inits = [numpy_helper.from_array(codes, "fc.weight_quantized"), numpy_helper.from_array(scale, "fc.weight_scale"),
             numpy_helper.from_array(zp, "fc.weight_zero_point")]
    node = helper.make_node("DequantizeLinear", ["fc.weight_quantized", "fc.weight_scale", "fc.weight_zero_point"],
                            ["fc.weight_DequantizeLinear_Output"], "fc.weight_DequantizeLinear", **attrs)
    save(path, inits, [node])


def ort_scale(absmax, qmin, qmax):
    return np.float32((np.float32(absmax) - np.float32(-absmax)) / np.float32(qmax - qmin))


def main(out):
    w = (rng.standard_normal((ROWS, COLS)) * 0.05).astype(np.float32)
    w[:, 7] *= 9  # an outlier column sets each row's range
    absmax = np.abs(w).max(axis=1)
    scale = np.array([ort_scale(a, -127, 127) for a in absmax], np.float32)
    # Midpoints (k + 1/2) * scale where x / s and x * fl32(1 / s) round to different codes.
    planted = 0
    for r in range(ROWS):
        inv = np.float32(1) / scale[r]
        for k in range(-60, 60):
            x = np.float32((k + 0.5) * np.float64(scale[r]))
            if np.round(x / scale[r]) != np.round(x * inv) and planted < 2 * (r + 1):
                w[r, 10 + planted % 40] = x
                planted += 1
    save(os.path.join(out, "float.onnx"), [numpy_helper.from_array(w, "fc.weight")])

    codes = np.clip((w / scale[:, None]).round(), -127, 127).astype(np.int8)
    qdq_model(os.path.join(out, "qdq.onnx"), codes, scale, np.zeros(ROWS, np.int8), 0)
    torch_codes = np.clip((w * (np.float32(1) / scale)[:, None]).round(), -128, 127).astype(np.int8)

    edited, escale = codes.copy(), scale.copy()
    edited[1, 5] += 1
    edited[4, 0] -= 2
    edited[7, 63] += 3 if edited[7, 63] < 124 else -3
    escale[2] = np.nextafter(escale[2], np.float32(1))
    qdq_model(os.path.join(out, "qdq_edited.onnx"), edited, escale, np.zeros(ROWS, np.int8), 0)

    lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
    s8 = np.float32((np.float32(hi) - np.float32(lo)) / np.float32(255))
    z8 = np.uint8(np.clip(np.round(-lo / s8), 0, 255))
    u8 = np.clip((w / s8).round() + z8, 0, 255).astype(np.uint8)
    qdq_model(os.path.join(out, "qdq_uint8.onnx"), u8, np.array(s8, np.float32), np.array(z8, np.uint8), None)

    manifest = {"codes": ROWS * COLS, "scales": ROWS, "torch_mismatches": int((torch_codes != codes).sum()),
                "torch_max_diff": int(np.abs(torch_codes.astype(int) - codes).max()),
                "edited_mismatches": 3, "edited_max_diff": 3, "edited_scale_mismatches": 1}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f)


if __name__ == "__main__":
    main(sys.argv[1])
