#!/usr/bin/env python3
"""PyTorch's CUDA quantize_per_channel (int8, axis 0) on the data shape bench_cuda measures.

    bench_cuda_peers.py ROWS COLS f32|bf16 REPEAT

Prints one JSON line: {"ms": best event-timed milliseconds, data already on the GPU} or
{"skip": "why"} when PyTorch, a CUDA device, or the operator for this dtype is missing.
"""
import json
import sys


def main():
    rows, cols, dtype, repeat = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    try:
        import torch
    except Exception as e:  # not installed, or broken
        return {"skip": "PyTorch is not importable (%s)" % type(e).__name__}
    if not torch.cuda.is_available():
        return {"skip": "PyTorch %s sees no CUDA device" % torch.__version__}
    kind = torch.float32 if dtype == "f32" else torch.bfloat16
    gen = torch.Generator(device="cuda").manual_seed(1)
    x = torch.randn(rows, cols, device="cuda", generator=gen).to(kind)
    scales = (x.float().abs().amax(dim=1) / 127.0).clamp_min(1e-8).double()
    zero_points = torch.zeros(rows, dtype=torch.int64, device="cuda")
    run = lambda: torch.quantize_per_channel(x, scales, zero_points, 0, torch.qint8)
    try:
        run()
    except Exception as e:
        return {"skip": "quantize_per_channel refuses %s input: %s" % (dtype, str(e).splitlines()[0][:120])}
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = float("inf")
    for _ in range(max(repeat, 1)):
        start.record()
        run()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end))
    return {"ms": best}


if __name__ == "__main__":
    print(json.dumps(main()))
