"""Helpers the Python suites share: where the CLI and the sources are, safetensors files written and
read with NumPy alone (so that the CLI's files are checked by something other than QuantLens), and
the values the conformance grid uses."""
import json
import os
import struct
import subprocess
import tempfile

import numpy as np

CLI = os.environ.get("QUANTLENS_CLI", "")
SOURCE_DIR = os.environ.get("QUANTLENS_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY_DIR = os.environ.get("QUANTLENS_BINARY_DIR", "")

_ST_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I8": np.int8, "U8": np.uint8,
              "I16": np.int16, "I32": np.int32, "I64": np.int64, "BF16": np.uint16, "F8_E4M3": np.uint8,
              "F8_E5M2": np.uint8, "BOOL": np.bool_}
_NP_NAMES = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16", np.dtype(np.float64): "F64",
             np.dtype(np.int8): "I8", np.dtype(np.uint8): "U8", np.dtype(np.int32): "I32",
             np.dtype(np.int64): "I64", np.dtype(np.int16): "I16"}


def write_safetensors(path, tensors, metadata=None):
    """tensors: name -> array, or name -> (array, safetensors dtype) for BF16 bits in uint16."""
    header, blobs, offset = {}, [], 0
    for name, value in tensors.items():
        array, dtype = value if isinstance(value, tuple) else (value, _NP_NAMES[value.dtype])
        data = np.ascontiguousarray(array).tobytes()
        header[name] = {"dtype": dtype, "shape": list(array.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = metadata
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def read_safetensors(path):
    """(name -> (dtype name, array), metadata)."""
    with open(path, "rb") as f:
        blob = f.read()
    n = struct.unpack("<Q", blob[:8])[0]
    header = json.loads(blob[8:8 + n])
    metadata = header.pop("__metadata__", {})
    out = {}
    for name, h in header.items():
        begin, end = h["data_offsets"]
        raw = np.frombuffer(blob[8 + n + begin:8 + n + end], dtype=_ST_DTYPES[h["dtype"]])
        out[name] = (h["dtype"], raw.reshape(h["shape"]))
    return out, metadata


def cli(*args, check=None):
    """Runs quantlens-cli; returns the CompletedProcess (stdout, stderr as text)."""
    if not CLI or not os.path.exists(CLI):
        raise RuntimeError("QUANTLENS_CLI does not name quantlens-cli: run the suites with ctest")
    p = subprocess.run([CLI, *map(str, args)], capture_output=True, text=True)
    if check is not None and p.returncode != check:
        raise AssertionError(f"quantlens-cli {' '.join(map(str, args))}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p


def cli_error(p):
    """The one-line message of a failed run (stderr's 'quantlens-cli: error: ...')."""
    lines = [l for l in p.stderr.splitlines() if l.startswith("quantlens-cli: error: ")]
    return lines[-1][len("quantlens-cli: error: "):] if lines else ""


def flags_of(keywords):
    """quantize()'s spec keywords as the CLI's flags (core's table names both)."""
    import quantlens
    flag = {k: f for k, f, _h, _kind, _d in quantlens.spec_keywords()}
    out = []
    for key, value in keywords.items():
        if value is True:
            out.append(flag[key])
        elif value is not False and value is not None:
            if isinstance(value, (list, tuple)):
                value = ",".join(map(str, value))
            out += [flag[key], str(value)]
    return out


def conformance_values(n, seed):
    """Normal values, every other one an exact multiple of 1/32 (ties once scaled), and every special
    one every five elements from index 3 (the recipe of tests/backend_test_util.h)."""
    rng = np.random.default_rng(seed)
    v = rng.normal(0.0, 2.0, n).astype(np.float32)
    v[::2] = np.round(v[::2] * 32.0) / 32.0
    specials = np.array([np.nan, np.uint32(0xFFC00000).view(np.float32), np.inf, -np.inf, -0.0, 1e30, -1e30,
                         3e-39, 1e-8, 524287.5, 1048576.5, -2097151.0, 2.0**60, -2.0**60,
                         float.fromhex('0x1.fffffep59'), 2.0**63, float.fromhex('0x1.fffffep62'), -2.0**63], dtype=np.float32)
    for k, s in enumerate(specials):
        if 5 * k + 3 < n:
            v[5 * k + 3] = s
    return v


def bf16_bits(x):
    """float32 -> bf16 bits, rounded to nearest even (NaN stays NaN)."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(x)
    rounded[nan] = ((u[nan] >> 16) | 0x40).astype(np.uint16)
    return rounded


class TempDir:
    def __enter__(self):
        self._d = tempfile.TemporaryDirectory(prefix="quantlens-py-")
        return self._d.name

    def __exit__(self, *exc):
        self._d.cleanup()
