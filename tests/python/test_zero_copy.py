"""The binding reads arrays in place and hands back views: no copy of the input, no copy of the
codes; the GIL is released while the job runs, and Ctrl-C cancels it."""
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
import unittest

import numpy as np

import qltest
import quantlens


def run_python(code, **kw):
    env = dict(os.environ)
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


class TestZeroCopy(unittest.TestCase):
    def test_results_are_views(self):
        x = np.random.default_rng(0).standard_normal((256, 512)).astype(np.float32)
        r = quantlens.quantize(x, preset="tensorrt", dtype="int4", block=(1, 128))
        # Each access is a view of the result's own memory, not a fresh copy.
        self.assertTrue(np.shares_memory(r.codes, r.codes))
        self.assertTrue(np.shares_memory(r.scales, r.scales))
        self.assertFalse(r.codes.flags.writeable)
        self.assertFalse(r.codes.flags.owndata)
        self.assertIsNotNone(r.codes.base)
        codes = r.codes
        del r  # the view keeps the result alive
        self.assertEqual(codes.shape, x.shape)
        self.assertTrue(-8 <= int(codes.min()) and int(codes.max()) <= 7)

    def test_model_tensors_are_views_of_the_mapping(self):
        with qltest.TempDir() as d:
            path = os.path.join(d, "m.safetensors")
            w = np.arange(64 * 128, dtype=np.float32).reshape(64, 128)
            qltest.write_safetensors(path, {"a": w, "b": w.astype(np.float16)})
            m = quantlens.open(path)
            a1, a2 = m["a"], m["a"]
            self.assertTrue(np.shares_memory(a1, a2))  # both views of the one memory mapping
            np.testing.assert_array_equal(a1, w)
            self.assertFalse(a1.flags.writeable)
            # Round trip: the mapped view into quantize and back; the result does not copy it either.
            r = quantlens.quantize(a1, preset="tensorrt", dtype="int8")
            np.testing.assert_array_equal(r.codes, quantlens.quantize(w, preset="tensorrt", dtype="int8").codes)
            del m
            np.testing.assert_array_equal(a2, w)  # the view keeps the mapping alive

    def test_no_python_allocation_grows_with_the_tensor(self):
        # NumPy reports every array buffer it allocates to tracemalloc: a copy of x (astype,
        # ascontiguousarray) would be traced; core's buffers, which the results view, are not.
        peaks, counts = [], []
        for rows in (256, 4096):
            x = np.random.default_rng(1).standard_normal((rows, 1024)).astype(np.float32)
            tracemalloc.start()
            before = tracemalloc.take_snapshot()
            r = quantlens.quantize(x, preset="tensorrt", dtype="int8")
            _ = (r.codes, r.scales, r.zero_points, r.codes)
            after = tracemalloc.take_snapshot()
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            peaks.append(peak)
            grown = after.compare_to(before, "lineno")
            counts.append(sum(max(d.count_diff, 0) for d in grown))
            self.assertFalse([d for d in grown if d.size_diff > 64 * 1024], "an allocation of the tensor's size")
            del r
        self.assertLess(peaks[1], 64 * 1024, peaks)  # 16 MiB input: a copy would be 16 MiB
        self.assertLess(peaks[1], peaks[0] + 16 * 1024, peaks)  # does not grow with the tensor
        self.assertLessEqual(counts[1], counts[0] + 2, counts)  # nor does the number of allocations

    def test_input_is_never_copied(self):
        # In a fresh process, the peak resident memory a quantize adds: its codes (1 byte per value) and
        # small per-row tables. A copy of the 64 MiB input would add 64 MiB more.
        p = run_python("""
            import resource, numpy as np, quantlens
            x = np.ones((4096, 4096), np.float32)
            x += np.arange(4096, dtype=np.float32)
            quantlens.quantize(np.ones((64, 64), np.float32))  # threads, caches, the module itself
            before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            r = quantlens.quantize(x, preset="tensorrt", dtype="int8")
            after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            print((after - before) * 1024, x.nbytes, r.codes.nbytes)
        """)
        out, err = p.communicate(timeout=300)
        self.assertEqual(p.returncode, 0, err)
        grown, input_bytes, code_bytes = map(int, out.split())
        self.assertLess(grown, code_bytes + input_bytes // 2, f"grew {grown} bytes for {input_bytes} of input")


class TestLongRuns(unittest.TestCase):
    def test_gil_is_released(self):
        x = np.random.default_rng(2).standard_normal((1024, 1024)).astype(np.float32)
        ticks = 0
        done = threading.Event()

        def job():
            try:
                quantlens.quantize(x, calib="mse", repeat=200)
            finally:
                done.set()

        t = threading.Thread(target=job)
        start = time.perf_counter()
        t.start()
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)
        t.join()
        elapsed = time.perf_counter() - start
        # With the GIL held for the whole job this thread would not run until it ended (a tick or
        # two). A free thread ticks about every millisecond; on 2 busy cores, where the job's own
        # threads and other suites share them, a 1 ms sleep can take ten times that.
        self.assertGreater(elapsed, 0.2, "the job is too short to show anything")
        self.assertGreater(ticks, elapsed * 20, f"{ticks} ticks in {elapsed:.2f} s")

    def test_ctrl_c_cancels(self):
        p = run_python("""
            import sys, time, numpy as np, quantlens
            x = np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32)
            print("ready", flush=True)
            start = time.perf_counter()
            try:
                quantlens.quantize(x, calib="mse", repeat=100000)
            except KeyboardInterrupt:
                print("interrupted after %.3f" % (time.perf_counter() - start), flush=True)
                sys.exit(3)
            print("finished", flush=True)
        """)
        self.assertEqual(p.stdout.readline().strip(), "ready")
        time.sleep(1.5)
        sent = time.perf_counter()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        waited = time.perf_counter() - sent
        self.assertEqual(p.returncode, 3, out + err)
        self.assertIn("interrupted", out)
        self.assertLess(waited, 10.0)


if __name__ == "__main__":
    unittest.main()
