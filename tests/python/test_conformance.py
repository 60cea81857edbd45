"""Every preset case of the conformance grid (tests/backend_test_util.h), on every shape and input
dtype of the grid, gives the same codes, scales and statistics through Python as through the CLI's
export and report of the same file; a tensor the CLI keeps or fails raises its message."""
import json
import os
import re
import sys
import unittest

import numpy as np

import qltest
import quantlens

# The grid's specs as quantize() keywords, which are the CLI's flags (core's one table names both).
GRID = {
    "torch/per-tensor/int8": dict(preset="torch", scheme="per-tensor", dtype="int8"),
    "torch/per-tensor/uint8-asym": dict(preset="torch", scheme="per-tensor", dtype="uint8", asymmetric=True,
                                        calib="minmax"),
    "torch/per-channel0/int8": dict(preset="torch", scheme="per-channel", axis=0, dtype="int8"),
    "torch/per-channel-last/int8": dict(preset="torch", scheme="per-channel", axis=-1, dtype="int8"),
    "torch/per-channel0/uint8-asym": dict(preset="torch", axis=0, dtype="uint8", asymmetric=True, calib="minmax"),
    "torch/per-channel0/uint4-asym": dict(preset="torch", axis=0, dtype="uint4", asymmetric=True, calib="minmax"),
    "torch/per-channel0/int32": dict(preset="torch", axis=0, dtype="int32"),
    "tensorrt/per-tensor/int8": dict(preset="tensorrt", scheme="per-tensor", dtype="int8"),
    "tensorrt/per-tensor/fp8": dict(preset="tensorrt", scheme="per-tensor", dtype="fp8-e4m3"),
    "tensorrt/per-channel0/fp8": dict(preset="tensorrt", axis=0, dtype="fp8-e4m3"),
    "tensorrt/per-channel-last/fp4": dict(preset="tensorrt", axis=-1, dtype="fp4-e2m1"),
    "tensorrt/block-1x16/int4": dict(preset="tensorrt", scheme="block", block=(1, 16), dtype="int4"),
    "tensorrt/block-4x16/int4": dict(preset="tensorrt", scheme="block", block=(4, 16), dtype="int4"),
    "aclnn-quantize/per-channel0/int8": dict(preset="aclnn-quantize", axis=0, dtype="int8"),
    "aclnn-quantize/per-tensor/uint8-asym": dict(preset="aclnn-quantize", scheme="per-tensor", dtype="uint8",
                                                 asymmetric=True, calib="minmax"),
    "aclnn-quantize/per-channel-last/fp8-e5m2": dict(preset="aclnn-quantize", axis=-1, dtype="fp8-e5m2"),
    "ascend-quant/per-tensor/int8": dict(preset="ascend-quant", scheme="per-tensor", dtype="int8"),
    "ascend-quant/per-channel-last/int8-asym": dict(preset="ascend-quant", axis=-1, dtype="int8", asymmetric=True,
                                                    calib="minmax"),
    "ascend-quant/floor": dict(preset="ascend-quant", axis=-1, dtype="int8", round="floor"),
    "ascend-quant/ceil": dict(preset="ascend-quant", axis=-1, dtype="int8", round="ceil"),
    "ascend-quant/trunc": dict(preset="ascend-quant", axis=-1, dtype="int8", round="trunc"),
    "ascend-quant/sqrt-mode/int8": dict(preset="ascend-quant", scheme="per-tensor", dtype="int8", sqrt_mode=True),
    "ascend-quant/per-tensor/fp8-e5m2": dict(preset="ascend-quant", scheme="per-tensor", dtype="fp8-e5m2"),
    # The grid's custom row divides and adds the zero point before rounding; the CLI's custom preset
    # chooses the rounding only (its arithmetic is otherwise custom's default), so that is the row here.
    "custom/per-group-g32/int4-half-away": dict(preset="custom", scheme="per-group", group_size=32, axis=-1,
                                                dtype="int4", round="half-away"),
    "pypto/int8": dict(preset="pypto", axis=0, dtype="int8"),
    "mx/fp8-e4m3": dict(preset="mx", dtype="fp8-e4m3"),
    "mx/fp4": dict(preset="mx", dtype="fp4-e2m1"),
    "mx/fp4/axis0": dict(preset="mx", dtype="fp4-e2m1", axis=0),
    "nvfp4/fp4": dict(preset="nvfp4"),
}
SHAPES = [(64, 256), (33, 129), (7, 17), (3, 5, 64), (1, 1031), (128, 32), (1000,)]


def grid_names():
    """The spec names of conformanceSpecs() in tests/backend_test_util.h."""
    with open(os.path.join(qltest.SOURCE_DIR, "tests", "backend_test_util.h")) as f:
        text = f.read()
    body = text[text.index("conformanceSpecs()"):text.index("conformanceShapes()")]
    return set(re.findall(r'"([a-z0-9-]+/[a-z0-9/.-]+)"', body))


def grid_tensors():
    """name -> (array for quantize, input_dtype, array as the file stores it, safetensors dtype)."""
    out = {}
    for i, shape in enumerate(SHAPES):
        values = qltest.conformance_values(int(np.prod(shape)), 7 + i).reshape(shape)
        out[f"s{i}_f32"] = (values, None, values, "F32")
        with np.errstate(over="ignore"):  # 1e30 and the like become inf, as the C++ grid's f16 does
            half = values.astype(np.float16)
        out[f"s{i}_f16"] = (half, None, half, "F16")
        bits = qltest.bf16_bits(values).reshape(shape)
        out[f"s{i}_bf16"] = (bits, "bf16", bits, "BF16")
    return out


def without_timing(entry):
    return {k: v for k, v in entry.items() if k != "timing"}


class TestConformance(unittest.TestCase):
    def test_grid_is_covered(self):
        self.assertEqual(set(GRID), grid_names(), "the grid's specs and this suite's rows must be the same")

    def test_python_matches_cli_export(self):
        tensors = grid_tensors()
        checked = refused = 0
        with qltest.TempDir() as d:
            model = os.path.join(d, "grid.safetensors")
            qltest.write_safetensors(model, {n: (t[2], t[3]) for n, t in tensors.items()})
            for row, keywords in GRID.items():
                with self.subTest(spec=row):
                    out = os.path.join(d, "out", row.replace("/", "_") + ".safetensors")
                    os.makedirs(os.path.dirname(out), exist_ok=True)
                    report = out + ".json"
                    # every tensor, vectors too (--include-non-weights): each one Python's quantize takes
                    p = qltest.cli("quantize", model, "--all", "--include-non-weights", *qltest.flags_of(keywords),
                                   "--out", out, "--export-layout", "native", "--report", report, "--quiet")
                    self.assertIn(p.returncode, (0, 1), p.stderr)
                    exported, meta = qltest.read_safetensors(out)
                    described = {t["name"]: t for t in json.loads(meta["quantlens"])["tensors"]}
                    with open(report) as f:
                        entries = {e["name"]: e for e in json.load(f)["tensors"]}
                    for name, (array, input_dtype, _stored, _st) in tensors.items():
                        entry = entries[name]
                        if name not in described:  # the CLI kept it (the spec does not apply) or it failed
                            why = entry.get("passed_through") or entry.get("error")
                            self.assertTrue(why, f"{row} {name}: neither exported nor explained")
                            with self.assertRaises(ValueError) as e:
                                quantlens.quantize(array, input_dtype=input_dtype, name=name, **keywords)
                            self.assertIn(str(e.exception), why, f"{row} {name}")
                            refused += 1
                            continue
                        r = quantlens.quantize(array, input_dtype=input_dtype, name=name, packed=True, **keywords)
                        d_ = described[name]
                        codes = exported[d_["codes"]][1]
                        self.assertEqual(r.codes.tobytes(), np.ascontiguousarray(codes).tobytes(),
                                         f"{row} {name}: codes")
                        self.assertEqual(r.codes.shape, codes.shape if d_["packing"] != "none" else array.shape)
                        scale_dtype, scale = exported[d_["scale"]]
                        if d_["scale_encoding"] == "f32":
                            self.assertEqual(r.scales.tobytes(), scale.astype(np.float32).tobytes(), f"{row} {name}")
                        else:  # MX / NVFP4: the scale codes
                            self.assertEqual(r.scale_codes.tobytes(), scale.tobytes(), f"{row} {name}")
                        if "zero_point" in d_:
                            zp = exported[d_["zero_point"]][1].astype(np.float32)
                            np.testing.assert_array_equal(r.zero_points.reshape(-1), zp.reshape(-1))
                        else:
                            self.assertIsNone(r.zero_points)
                        if "global_scale" in d_:
                            self.assertEqual(np.float32(r.tensor_scale), exported[d_["global_scale"]][1][0])
                        # The same statistics, to the bit: the report's entry but for the timing.
                        self.assertEqual(without_timing(r.report), without_timing(entry), f"{row} {name}")
                        checked += 1
        # Every spec quantized some of the grid, and the grid's refusals were met too.
        print(f"{checked} tensors checked code for code, {refused} refused alike", file=sys.stderr)
        self.assertGreater(checked, 3 * 150)
        self.assertGreater(refused, 0)


if __name__ == "__main__":
    unittest.main()
