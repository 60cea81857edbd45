"""Benchmark: quantize() from Python on a 4096 x 4096 f32 array against the core/job time of the same
job timed inside C++ (quantlens._quantlens._time_core_job: the same tensor run, no binding in the loop).
The binding adds only what does not grow with the tensor (keywords, the buffer, the result object),
so the ratio of the medians must stay within 1.2.

    PYTHONPATH=build/dev /usr/bin/python3 tests/python/bench_quantize.py [--rounds N]
"""
import argparse
import statistics
import sys
import time

import numpy as np

import quantlens
from quantlens import _quantlens

LIMIT = 1.2
SPEC = dict(preset="tensorrt", dtype="int4", scheme="block", block=128, axis=-1, calib="absmax")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    x = np.random.default_rng(0).standard_normal((4096, 4096)).astype(np.float32)
    quantlens.quantize(x, **SPEC)  # warm: threads, page faults of the first code buffers
    _quantlens._time_core_job(x, 1, **SPEC)
    py, core = [], []
    for _ in range(args.rounds):  # interleaved, so that a busy machine slows both alike
        start = time.perf_counter()
        r = quantlens.quantize(x, **SPEC)
        py.append((time.perf_counter() - start) * 1e3)
        del r
        core += _quantlens._time_core_job(x, 1, **SPEC)
    ratio = statistics.median(py) / statistics.median(core)
    print(f"quantize 4096x4096 f32, tensorrt int4 block 128: python {statistics.median(py):.1f} ms, "
          f"core/job {statistics.median(core):.1f} ms (median of {args.rounds}), ratio {ratio:.3f} "
          f"(limit {LIMIT})")
    return 0 if ratio <= LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
