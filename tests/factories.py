"""Objects several test modules build the same way."""

import numpy as np

import mha


def random_layer(d_model=8, n_heads=4, seed=0, **kwargs):
    """A float64 layer with random biases (a fresh layer has zeros), so that tests exercise them."""
    layer = mha.MultiHeadAttention(d_model, n_heads, rng=seed, **kwargs)
    rng = np.random.default_rng(seed + 1)
    for name, arr in layer.parameters().items():
        if name.startswith("b_"):
            arr[...] = rng.standard_normal(arr.shape)
    return layer


def record_calls(monkeypatch, module, name: str) -> list:
    """Wrap ``module.name`` for one test so that every call is recorded; returns the list of calls'
    positional arguments, one tuple per call (empty until something calls it)."""
    calls = []
    original = getattr(module, name)

    def recording(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, recording)
    return calls


def modern_layer(d_model, n_heads, options, *, scale=4.0, context=4, nudge=0.3, seed=0):
    """A float64 :class:`mha.ModernAttention` with ``options`` (``rope="yarn"`` for a YaRN table), every
    weight, bias and gain nudged by ``nudge`` standard normals: no bias at 0, no gain at 1."""
    from mha.rope_scaling import scaled_rotary

    options = dict(options)
    if options.get("rope") == "yarn":
        options["rope"] = scaled_rotary("yarn", d_model // n_heads, scale=scale, original_context=context)
    layer = mha.ModernAttention(d_model, n_heads, rng=seed, **options)
    rng = np.random.default_rng(seed + 1)
    for arr in layer.parameters().values():
        arr[...] += nudge * rng.standard_normal(arr.shape)
    return layer
