"""Independent NumPy computation of QuantLens's error metrics (core/analysis/error_stats.h conventions).

usage: analysis_metrics.py metrics X.f32 XHAT.f32      -> JSON of the metrics
       analysis_metrics.py hist VALUES.f32 LO HI BINS  -> JSON {"counts": [...]}
Raw little-endian float32 files. Non-finite x or x̂ are left out of the metrics, as in C++.
"""
import json
import sys

import numpy as np


def metrics(x, xh):
    out = {"count": int(x.size), "nan_count": int(np.isnan(x).sum()), "inf_count": int(np.isinf(x).sum())}
    keep = np.isfinite(x) & np.isfinite(xh)
    x = x[keep].astype(np.float64)
    xh = xh[keep].astype(np.float64)
    out["finite"] = int(x.size)
    if x.size == 0:
        return out
    e = x - xh
    nx, ne, nxh = np.linalg.norm(x), np.linalg.norm(e), np.linalg.norm(xh)
    out["mse"] = float(np.mean(e * e))
    out["rmse"] = float(np.sqrt(np.mean(e * e)))
    out["max_abs_error"] = float(np.max(np.abs(e)))
    out["worst_index"] = int(np.flatnonzero(keep)[np.argmax(np.abs(e))])
    out["mean_abs_error"] = float(np.mean(np.abs(e)))
    if ne == 0:
        out["sqnr_db"], out["rel_error"] = "inf", 0.0
    elif nx == 0:
        out["sqnr_db"], out["rel_error"] = "-inf", "inf"
    else:
        out["sqnr_db"] = float(20 * np.log10(nx / ne))
        out["rel_error"] = float(ne / nx)
    if nx == 0 and nxh == 0:
        out["cosine"] = 1.0
    elif nx == 0 or nxh == 0:
        out["cosine"] = 0.0
    else:
        out["cosine"] = float(np.dot(x, xh) / (nx * nxh))
    ae, ax = np.abs(e), np.abs(x)
    for key, t in (("ratio_1e3", 1e-3), ("ratio_5e3", 5e-3)):
        over = np.where(ax == 0, ae != 0, ae > t * ax)
        out[key] = float(over.mean())
    return out


def main():
    mode = sys.argv[1]
    if mode == "metrics":
        x = np.fromfile(sys.argv[2], dtype="<f4")
        xh = np.fromfile(sys.argv[3], dtype="<f4")
        print(json.dumps(metrics(x, xh)))
    elif mode == "hist":
        v = np.fromfile(sys.argv[2], dtype="<f4").astype(np.float64)
        counts, _ = np.histogram(v, bins=int(sys.argv[5]), range=(float(sys.argv[3]), float(sys.argv[4])))
        print(json.dumps({"counts": counts.tolist()}))


if __name__ == "__main__":
    main()
