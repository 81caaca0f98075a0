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
