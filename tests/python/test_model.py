"""open(), diff(), plan() and check(): the CLI's inspect, diff, plan and check jobs from Python, on
every format the app opens, giving the CLI's reports."""
import json
import os
import unittest

import numpy as np

import qltest
import quantlens

SAMPLE = os.path.join(qltest.SOURCE_DIR, "resources", "sample", "sample_model.safetensors")
GGUF = os.path.join(qltest.SOURCE_DIR, "tests", "data", "gguf")


def cli_json(*args, code=0):
    return json.loads(qltest.cli(*args, check=code).stdout)


class TestOpen(unittest.TestCase):
    def test_inspect_is_the_clis(self):
        for path in (SAMPLE, os.path.join(GGUF, "types_4x256.gguf")):
            with self.subTest(path=os.path.basename(path)):
                self.assertEqual(quantlens.open(path).inspect(), cli_json("inspect", path, "--json"))

    def test_safetensors_tensors_are_mapped_views(self):
        m = quantlens.open(SAMPLE)
        listed = cli_json("inspect", SAMPLE, "--json")["tensors"]
        self.assertEqual(m.names(), [t["name"] for t in listed])
        self.assertEqual(len(m), len(listed))
        stored, _ = qltest.read_safetensors(SAMPLE)
        for name in m:
            a = m[name]
            self.assertEqual(list(a.shape), m.info(name)["shape"])
            np.testing.assert_array_equal(a, stored[name][1])
            self.assertFalse(a.flags.owndata)
        with self.assertRaises(KeyError) as e:
            m["no.such.tensor"]
        self.assertIn("no such tensor", str(e.exception))

    def test_gguf_decodes_as_ggml(self):
        m = quantlens.open(os.path.join(GGUF, "types_4x256.gguf"))
        expected, _ = qltest.read_safetensors(os.path.join(GGUF, "types_4x256.expected.safetensors"))
        compared = 0
        for name in m:
            if name in expected:
                a = m[name]
                if m.info(name)["dtype"] == "bf16":  # bf16 comes as its bits: NumPy has no bfloat16
                    a = (a.astype(np.uint32) << 16).view(np.float32)
                np.testing.assert_array_equal(a.astype(np.float32), expected[name][1].astype(np.float32))
                compared += 1
        self.assertGreater(compared, 3)

    def test_hdf5(self):
        import h5py
        with qltest.TempDir() as d:
            path = os.path.join(d, "m.h5")
            w = np.random.default_rng(0).standard_normal((8, 32)).astype(np.float32)
            with h5py.File(path, "w") as f:
                f.create_dataset("dense/kernel", data=w)
            m = quantlens.open(path)
            np.testing.assert_array_equal(m["dense/kernel"], w)
            self.assertEqual(m.inspect(), cli_json("inspect", path, "--json"))

    def test_onnx(self):
        import onnx
        from onnx import helper, numpy_helper
        with qltest.TempDir() as d:
            path = os.path.join(d, "m.onnx")
            w = np.random.default_rng(1).standard_normal((16, 8)).astype(np.float32)
            graph = helper.make_graph([helper.make_node("MatMul", ["x", "fc.weight"], ["y"])], "g",
                                      [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 16])],
                                      [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 8])],
                                      [numpy_helper.from_array(w, "fc.weight")])
            onnx.save(helper.make_model(graph), path)
            m = quantlens.open(path)
            np.testing.assert_array_equal(m["fc.weight"], w)
            self.assertEqual(m.inspect(), cli_json("inspect", path, "--json"))

    def test_model_quantize_is_the_clis(self):
        m = quantlens.open(SAMPLE)
        name = max(m, key=lambda n: m.info(n)["bytes"])  # a conv weight [O, I, kh, kw]
        r = m.quantize(name, preset="tensorrt", dtype="fp8-e4m3", axis=0)
        with qltest.TempDir() as d:
            report = os.path.join(d, "r.json")
            qltest.cli("quantize", SAMPLE, "--tensor", name, "--preset", "tensorrt", "--dtype", "fp8-e4m3",
                       "--axis", "0", "--report", report, "--quiet", check=0)
            with open(report) as f:
                entry = json.load(f)["tensors"][0]
        self.assertEqual({k: v for k, v in r.report.items() if k != "timing"},
                         {k: v for k, v in entry.items() if k != "timing"})
        # The mapped view through quantize() gives the same codes.
        view = quantlens.quantize(m[name], preset="tensorrt", dtype="fp8-e4m3", axis=0)
        np.testing.assert_array_equal(view.codes, r.codes)
        self.assertGreater(r.sqnr_db, 20)


class TestJobs(unittest.TestCase):
    def test_diff_is_the_clis(self):
        a = os.path.join(GGUF, "llama_qk.hf.safetensors")
        b = os.path.join(GGUF, "llama_qk.gguf")
        with qltest.TempDir() as d:
            report = os.path.join(d, "d.json")
            qltest.cli("diff", a, b, "--report", report, "--quiet")
            with open(report) as f:
                expected = json.load(f)
        self.assertEqual(quantlens.diff(a, b), expected)
        with self.assertRaises(OSError):
            quantlens.diff(a, "/nonexistent.gguf")

    def test_plan_is_the_clis(self):
        rng = np.random.default_rng(5)
        with qltest.TempDir() as d:
            model = os.path.join(d, "model.safetensors")
            qltest.write_safetensors(model, {
                f"layers.{i}.mlp.{p}.weight": (rng.standard_normal((64, 256)) * (1 + i)).astype(np.float32)
                for i in range(2) for p in ("up_proj", "down_proj")})
            report = os.path.join(d, "plan.json")
            qltest.cli("plan", model, "--bits-per-weight", "6", "--candidates", "keep,int4-g64,int8-channel",
                       "--report", report, "--quiet", check=0)
            with open(report) as f:
                expected = json.load(f)
            got = quantlens.plan(model, budget=6, candidates=["keep", "int4-g64", "int8-channel"])
            self.assertEqual(got, expected)
            self.assertEqual(quantlens.plan(model, budget=6, candidates="keep,int4-g64,int8-channel"), expected)
            custom = quantlens.plan(model, size=64 * 256 * 4,
                                    candidates={"keep": None, "int4-g32": None,
                                                "int8-g64": {"preset": "tensorrt", "block": 64}})
            self.assertEqual([c["name"] for c in custom["candidates"]], ["keep", "int4-g32", "int8-g64"])
            with self.assertRaises(ValueError) as e:
                quantlens.plan(model, budget=4, candidates="keep,int5")
            self.assertIn("int5", str(e.exception))
            with self.assertRaises(ValueError):
                quantlens.plan(model)  # no budget

    def test_check_is_the_clis(self):
        with qltest.TempDir() as d:
            report = os.path.join(d, "r.json")
            qltest.cli("quantize", SAMPLE, "--all", "--preset", "tensorrt", "--dtype", "int4", "--block", "1,32",
                       "--report", report, "--quiet")
            rules = ["sqnr < 20", "max(max_abs) > 10"]
            p = qltest.cli("check", report, *[a for r in rules for a in ("--rule", r)])
            with open(report) as f:
                doc = json.load(f)
            for source in (report, doc):
                got = quantlens.check(source, rules)
                failures = sorted(f"FAIL  {s['name']}: {f}" for s in got["subjects"] for f in s["failures"])
                self.assertEqual(failures, sorted(l for l in p.stdout.splitlines() if l.startswith("FAIL")))
                self.assertEqual(got["failed"] > 0, p.returncode == 1)
        with self.assertRaises(ValueError) as e:
            quantlens.check(doc, "sqnr <")
        self.assertTrue(str(e.exception).startswith("--rule: "))


if __name__ == "__main__":
    unittest.main()
