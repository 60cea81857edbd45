"""QuantLens from Python: what quantization does to model weights.

The same jobs as ``quantlens-cli`` (core's pipeline, not a re-implementation), for NumPy arrays and
model files::

    import numpy as np, quantlens
    w = np.random.default_rng(0).standard_normal((256, 512), dtype=np.float32)
    r = quantlens.quantize(w, preset="tensorrt", dtype="int4", block=128)
    r.codes, r.scales, r.sqnr_db, r.histograms["error"], r.dequantize()

    m = quantlens.open("model.safetensors")      # tensors as read-only NumPy views, loaded lazily
    m.inspect()                                   # as `quantlens-cli inspect --json`
    quantlens.compare(w, {"preset": "torch"}, {"preset": "aclnn-quantize"})
    quantlens.diff("model.safetensors", "model.gguf")
    quantlens.plan("model.safetensors", budget=4.5)
    quantlens.check(report, ["sqnr < 30"])

Spec keywords are the CLI's SPEC flags (``spec_keywords()``); errors carry the CLI's messages.
"""
import inspect as _inspect

from . import _quantlens
from ._quantlens import (  # noqa: F401
    CompareResult,
    Model,
    QuantizeResult,
    __version__,
    backends,
    check,
    compare,
    diff,
    open,
    plan,
    spec_keywords,
)

__all__ = ["quantize", "compare", "open", "diff", "plan", "check", "backends", "spec_keywords",
           "QuantizeResult", "CompareResult", "Model", "__version__"]


def _signature():
    # quantize's keywords are core's table of spec options (the CLI's SPEC flags), read here so that
    # help(quantlens.quantize) and IDEs show them; None is the CLI's default for each.
    P = _inspect.Parameter
    params = [P("x", P.POSITIONAL_OR_KEYWORD)]
    for keyword, _flag, _help, _kind, default in spec_keywords():
        params.append(P(keyword, P.KEYWORD_ONLY, default=default))
    params += [P("backend", P.KEYWORD_ONLY, default="cpu"), P("repeat", P.KEYWORD_ONLY, default=1),
               P("packed", P.KEYWORD_ONLY, default=False), P("input_dtype", P.KEYWORD_ONLY, default=None),
               P("name", P.KEYWORD_ONLY, default="x")]
    return _inspect.Signature(params)


def quantize(x, **spec):
    return _quantlens.quantize(x, **spec)


quantize.__doc__ = _quantlens.quantize.__doc__
quantize.__signature__ = _signature()
