#!/usr/bin/env python3
"""TensorRT int4 block quantization from Python.

1. Reproduces the golden V-R3 of the operator reference (spec section 7.5): int4 blocks of 2 rows
   (block shape 2x1) over a 4x8 weight with given scales, y = clamp(RNE(w / scale[r // 2, c]), -8, 7),
   computed here with NumPy and compared with QuantLens code for code.
2. Quantizes a random 512x1024 weight with 128-element blocks along the rows (calibrated, absmax) and
   plots the error histogram QuantLens measured, when matplotlib is installed.

    PYTHONPATH=build/dev /usr/bin/python3 app/python/examples/tensorrt_int4_golden.py [--plot error.png]
"""
import argparse
import sys

import numpy as np

import quantlens


def golden():
    i = np.arange(32)
    f32 = np.float32
    w = ((i % 11).astype(f32) - f32(5.3) + f32(0.1) * (i // 8).astype(f32)).reshape(4, 8)
    scales = (0.5 + 0.25 * (np.arange(16) % 5)).astype(np.float32).reshape(2, 8)
    expected = np.clip(np.rint(w / np.repeat(scales, 2, axis=0)), -8, 7).astype(np.int8)
    r = quantlens.quantize(w, preset="tensorrt", dtype="int4", scheme="block", block=(2, 1), scales=scales)
    if not np.array_equal(r.codes, expected):
        print("V-R3: codes differ from the golden\n", r.codes, "\n", expected, file=sys.stderr)
        return False
    print("V-R3 (TensorRT int4, 2x1 blocks): all 32 codes match the golden")
    return True


def histogram(path):
    w = np.random.default_rng(0).standard_normal((512, 1024)).astype(np.float32)
    r = quantlens.quantize(w, preset="tensorrt", dtype="int4", block=128)
    h = r.histograms["error"]
    clipped = r.clipping["clipped_fraction"]
    print(f"int4, 128-element blocks: SQNR {r.sqnr_db:.2f} dB, {r.scales.size} blocks, "
          f"{np.count_nonzero(clipped)} with clipped elements, max |error| {r.stats['max_abs_error']:.4f}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (Debian: apt-get install python3-matplotlib)")
        return
    edges, counts = h["edges"], h["counts"]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.stairs(counts, edges, fill=True)
    ax.set_yscale("log")
    ax.set_xlabel("x - x̂")
    ax.set_ylabel("elements")
    ax.set_title(f"TensorRT int4, blocks of 128: SQNR {r.sqnr_db:.1f} dB")
    fig.tight_layout()
    fig.savefig(path)
    print(f"error histogram written to {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", default="int4_error_histogram.png", help="where the plot goes")
    args = parser.parse_args()
    ok = golden()
    histogram(args.plot)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
