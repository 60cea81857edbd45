"""quantize() and compare(): keywords and values as the CLI's, results as NumPy arrays, and every
refusal with the CLI's message."""
import os
import unittest

import numpy as np

import qltest
import quantlens


def weights(shape=(64, 256), seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


class TestKeywords(unittest.TestCase):
    def test_keywords_are_the_cli_flags(self):
        table = quantlens.spec_keywords()
        flags = [f for _k, f, _h, _kind, _d in table]
        help_text = qltest.cli("quantize", "--help", check=0).stdout
        for flag in flags:
            self.assertIn(flag, help_text)
        for keyword, flag, _h, _kind, _d in table:
            if flag not in ("--scale", "--zero-point"):  # Python says scales=, zero_points= (arrays)
                self.assertEqual(keyword, flag[2:].replace("-", "_"))
        import inspect
        params = inspect.signature(quantlens.quantize).parameters
        for keyword, *_ in table:
            self.assertIn(keyword, params)
        self.assertEqual(params["preset"].default, "torch")  # the CLI's default, from the same table

    def test_values_as_typed_on_the_command_line(self):
        x = weights()
        a = quantlens.quantize(x, preset="tensorrt", dtype="int4", block="1,128")
        b = quantlens.quantize(x, preset="TensorRT", dtype="int4", block=(1, 128))
        c = quantlens.quantize(x, preset="tensorrt", dtype="int4", scheme="block", block=128, axis=-1)
        for r in (b, c):
            np.testing.assert_array_equal(a.codes, r.codes)
            np.testing.assert_array_equal(a.scales, r.scales)
        self.assertEqual(a.scales.shape, (64, 2))
        self.assertEqual(a.codes.dtype, np.int8)
        self.assertTrue(-8 <= a.codes.min() and a.codes.max() <= 7)

    def test_axis_none_is_the_cli_default(self):
        x = weights()
        per_channel = quantlens.quantize(x, axis=None)
        self.assertEqual(per_channel.scales.shape, (64, 1))  # per-channel on axis 0 (x's rank: broadcasts)
        grouped = quantlens.quantize(x, preset="custom", dtype="int4", group_size=64)
        self.assertEqual(grouped.scales.shape, (64, 4))  # groups along the last axis

    def test_axis_none_views_a_conv_where_only_that_fits(self):
        # ascend-quant's scale axis is one of the last two: a conv [O, I, kh, kw] is quantized as
        # [O, I*kh*kw], its codes and values in x's own shape (quant/weight_view.h).
        x = weights((16, 3, 3, 3))
        r = quantlens.quantize(x, preset="ascend-quant")
        self.assertEqual(r.codes.shape, x.shape)
        self.assertEqual(r.shape, x.shape)
        self.assertEqual(r.scales.size, 16)
        self.assertIn("quantized as [16, 27]", r.notes)
        with self.assertRaises(ValueError) as e:
            quantlens.quantize(weights((48, 1, 3, 3)), preset="mx")
        self.assertIn("9 values per output channel, fewer than one MX block of 32", str(e.exception))

    def test_unknown_keyword_names_the_closest(self):
        with self.assertRaises(TypeError) as e:
            quantlens.quantize(weights(), presett="torch")
        self.assertIn("'presett'", str(e.exception))
        self.assertIn("did you mean 'preset'", str(e.exception))


class TestRefusals(unittest.TestCase):
    """Each message is the CLI's: the Python message is the reason the CLI's one line ends with."""

    def assertCliMessage(self, keywords, python_message, x=None):
        with qltest.TempDir() as d:
            path = os.path.join(d, "m.safetensors")
            qltest.write_safetensors(path, {"w": weights() if x is None else x})
            p = qltest.cli("quantize", path, "--tensor", "w", *qltest.flags_of(keywords), "--quiet")
            self.assertNotEqual(p.returncode, 0)
            line = qltest.cli_error(p)
            self.assertTrue(line.endswith(python_message), f"CLI: {line!r}\nPython: {python_message!r}")

    def check(self, exception, keywords, x=None):
        with self.assertRaises(exception) as e:
            quantlens.quantize(weights() if x is None else x, **keywords)
        self.assertNotIn("\n", str(e.exception))
        self.assertCliMessage(keywords, str(e.exception), x)
        return str(e.exception)

    def test_unknown_names(self):
        self.assertIn("did you mean 'tensorrt'", self.check(ValueError, {"preset": "tensort"}))
        self.assertIn("unknown --dtype 'int3'", self.check(ValueError, {"dtype": "int3"}))
        self.check(ValueError, {"scheme": "per-row"})
        self.check(ValueError, {"calib": "percentile=101"})
        self.check(ValueError, {"round": "nearest", "preset": "ascend-quant"})

    def test_conflicting_options(self):
        self.check(ValueError, {"scheme": "per-tensor", "block": 32})
        self.check(ValueError, {"scheme": "per-tensor", "axis": 0})
        self.check(ValueError, {"preset": "nvfp4", "group_size": 32})
        self.check(ValueError, {"calib": "file"})

    def test_shapes_the_spec_cannot_take(self):
        # TensorRT blocks must divide; int32 words need a multiple of 8; an axis the tensor lacks.
        self.check(ValueError, {"preset": "tensorrt", "dtype": "int4", "block": 100})
        self.check(ValueError, {"preset": "ascend-quant", "dtype": "int32", "axis": -1}, weights((4, 12)))
        self.check(ValueError, {"axis": 5})

    def test_wrong_array_dtypes(self):
        for bad in (np.zeros((4, 8), np.float64), np.zeros((4, 8), np.int32), np.zeros((4, 8), np.uint16)):
            with self.assertRaises(TypeError) as e:
                quantlens.quantize(bad)
            self.assertIn(str(bad.dtype), str(e.exception))
        with self.assertRaises(TypeError):
            quantlens.quantize(np.zeros(8, np.float32), input_dtype="bf16")
        with self.assertRaises(TypeError):
            quantlens.quantize([1.0, 2.0])

    def test_non_contiguous_arrays(self):
        x = weights()
        for view in (x.T, x[:, ::2], x[::-1]):
            with self.assertRaises(ValueError) as e:
                quantlens.quantize(view)
            self.assertIn("not C-contiguous", str(e.exception))
        # A view that is contiguous is read in place (a row block, a reshape).
        quantlens.quantize(x[8:16])
        quantlens.quantize(x.reshape(128, 128))

    def test_files_are_os_errors(self):
        with self.assertRaises(OSError) as e:
            quantlens.quantize(weights(), calib="file", scales="/nonexistent/scales.safetensors:s")
        self.assertIn("/nonexistent/scales.safetensors", str(e.exception))
        with self.assertRaises(OSError):
            quantlens.open("/nonexistent/model.safetensors")


class TestResults(unittest.TestCase):
    def test_given_scales_reproduce_the_formula(self):
        # TensorRT divides and rounds half to even: the arithmetic NumPy writes the same way in fp32.
        x = weights((8, 64))
        s = np.full((8, 1), 0.25, np.float32) * (1 + np.arange(8, dtype=np.float32)[:, None])
        r = quantlens.quantize(x, preset="tensorrt", dtype="int8", axis=0, scales=s)
        np.testing.assert_array_equal(r.codes, np.clip(np.rint(x / s), -128, 127).astype(np.int8))
        np.testing.assert_array_equal(r.scales, s)
        np.testing.assert_array_equal(r.dequantize(), r.codes.astype(np.float32) * s)

    def test_asymmetric_zero_points(self):
        x = weights((4, 32)) + 3
        r = quantlens.quantize(x, dtype="uint8", asymmetric=True, calib="minmax", axis=0)
        self.assertEqual(r.zero_points.shape, (4, 1))
        self.assertEqual(r.codes.dtype, np.uint8)
        err = np.abs(r.dequantize() - x).max(axis=1)
        self.assertTrue(np.all(err <= r.scales.reshape(-1) * 0.5 + 1e-6))

    def test_statistics_as_arrays_and_dicts(self):
        x = weights()
        r = quantlens.quantize(x, preset="tensorrt", dtype="int4", block=(1, 64))
        xhat = r.dequantize()
        err = x.astype(np.float64) - xhat
        sqnr = 10 * np.log10(np.sum(x.astype(np.float64) ** 2) / np.sum(err ** 2))
        self.assertAlmostEqual(r.sqnr_db, sqnr, places=6)
        self.assertAlmostEqual(r.stats["sqnr_db"], sqnr, places=6)
        h = r.histograms["error"]
        self.assertEqual(len(h["edges"]), len(h["counts"]) + 1)
        self.assertEqual(int(h["counts"].sum()) + h["underflow"] + h["overflow"] + h["nan"], x.size)
        counts, _ = np.histogram(err, bins=h["edges"])
        self.assertLessEqual(np.abs(counts - h["counts"]).sum(), 4)  # fp32 vs double at the edges
        c = r.clipping
        self.assertEqual(len(c["count"]), 64 * 4)
        self.assertEqual(int(c["count"].sum()), x.size)
        self.assertEqual(r.report["stats"]["count"], x.size)
        self.assertEqual(r.report["spec"]["preset"], "tensorrt")

    def test_packed_codes(self):
        x = weights((4, 16))
        r = quantlens.quantize(x, preset="torch", dtype="uint4", asymmetric=True, calib="minmax", packed=True)
        u = quantlens.quantize(x, preset="torch", dtype="uint4", asymmetric=True, calib="minmax")
        self.assertTrue(r.packed)
        self.assertEqual(r.codes.shape, (32,))
        flat = u.codes.reshape(-1)
        np.testing.assert_array_equal(r.codes, (flat[0::2] | (flat[1::2] << 4)).astype(np.uint8))
        words = quantlens.quantize(x, preset="ascend-quant", dtype="int32", axis=-1, packed=True)
        self.assertEqual((words.codes.dtype, words.codes.shape), (np.int32, (4, 2)))

    def test_input_dtypes_read_alike(self):
        x = weights((16, 64))
        bits = qltest.bf16_bits(x).reshape(x.shape)
        as_float = (bits.astype(np.uint32) << 16).view(np.float32)
        a = quantlens.quantize(bits, input_dtype="bf16", preset="tensorrt", dtype="int8")
        b = quantlens.quantize(as_float, preset="tensorrt", dtype="int8")
        np.testing.assert_array_equal(a.codes, b.codes)
        np.testing.assert_array_equal(a.scales, b.scales)
        h = x.astype(np.float16)
        np.testing.assert_array_equal(quantlens.quantize(h).codes, quantlens.quantize(h.astype(np.float32)).codes)

    def test_compare_two_presets_as_the_cli(self):
        x = weights((64, 256), seed=3)
        c = quantlens.compare(x, {"preset": "torch"}, {"preset": "aclnn-quantize"})
        self.assertEqual(c.comparison["a"], "torch")
        self.assertEqual(c.comparison["b"], "aclnn-quantize")
        self.assertEqual(c.mismatched, int(np.count_nonzero(c.a.codes != c.b.codes)))
        with qltest.TempDir() as d:
            path = os.path.join(d, "m.safetensors")
            qltest.write_safetensors(path, {"x": x})
            report = os.path.join(d, "c.json")
            qltest.cli("compare", path, "--tensor", "x", "--preset", "torch", "--preset-b", "aclnn-quantize",
                       "--report", report, "--quiet", check=0)
            import json
            with open(report) as f:
                cli = json.load(f)
        self.assertEqual(cli["comparison"], c.report["comparison"])
        self.assertEqual([{k: v for k, v in t.items() if k != "timing"} for t in cli["tensors"]],
                         [{k: v for k, v in t.items() if k != "timing"} for t in c.report["tensors"]])

    def test_compare_names_the_side(self):
        with self.assertRaises(ValueError) as e:
            quantlens.compare(weights(), {"preset": "torch"}, {"preset": "tensorrt", "dtype": "int4", "block": 100})
        self.assertTrue(str(e.exception).startswith("B ("), str(e.exception))


if __name__ == "__main__":
    unittest.main()
