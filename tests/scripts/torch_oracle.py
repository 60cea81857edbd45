"""Independent oracle: PyTorch's own quantize_per_tensor / quantize_per_channel.

Usage: torch_oracle.py JOB.json
The job lists cases; each names a raw little-endian float32 input file. For each case the script
writes <input>.codes: raw int64 codes from int_repr() (quint4x2: the packed bytes).
Exit code 3 when torch is not importable, so the test can skip with a reason.
"""
import json
import sys

try:
    import numpy as np
    import torch
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"torch unavailable: {e}", file=sys.stderr)
    sys.exit(3)

DTYPES = {"qint8": torch.qint8, "quint8": torch.quint8, "qint32": torch.qint32, "quint4x2": torch.quint4x2}


def run(case):
    x = torch.from_numpy(np.fromfile(case["input"], dtype="<f4").reshape(case["shape"]))
    dtype = DTYPES[case["dtype"]]
    if case["mode"] == "per_tensor":
        q = torch.quantize_per_tensor(x, case["scales"][0], int(case["zero_points"][0]), dtype)
    else:
        scales = torch.tensor(case["scales"], dtype=torch.float64)
        zps = torch.tensor(case["zero_points"], dtype=torch.int64)
        q = torch.quantize_per_channel(x, scales, zps, case["axis"], dtype)
    codes = q.int_repr().numpy().astype("<i8")
    codes.tofile(case["input"] + ".codes")


def main():
    with open(sys.argv[1]) as f:
        job = json.load(f)
    for case in job["cases"]:
        run(case)


if __name__ == "__main__":
    main()
