"""Exchange weights with the frameworks' attention layers without importing them.

Pure array conversions: this module never imports :mod:`mha.layers` (the layer's classmethods call it),
nor PyTorch.

PyTorch's ``nn.MultiheadAttention``

PyTorch stores projections as ``(out_features, in_features)`` and applies them as ``x @ W.T``; this package
stores ``(in, out)`` and applies ``x @ W``. So each matrix is transposed on the way in and out. When
``kdim == vdim == d_model`` PyTorch stacks the three input projections into ``in_proj_weight`` of shape
``(3 * d_model, d_model)``; otherwise it keeps ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight``.
Biases are one ``in_proj_bias`` of shape ``(3 * d_model,)`` and ``out_proj.bias`` in both cases.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["to_torch_state_dict", "read_torch_state_dict"]

_PACKED = ("in_proj_weight", "out_proj.weight")
_SEPARATE = ("q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight")
_BIASES = ("in_proj_bias", "out_proj.bias")


def to_torch_state_dict(layer) -> dict[str, np.ndarray]:
    """Return the layer's weights under the keys and layouts of ``nn.MultiheadAttention.state_dict()``.

    Arrays are fresh C-contiguous copies; ``torch.from_numpy`` on each gives a loadable state dict.

    Examples
    --------
    >>> import mha
    >>> sd = to_torch_state_dict(mha.MultiHeadAttention(8, 2, rng=0))
    >>> {name: array.shape for name, array in sd.items()}
    {'in_proj_weight': (24, 8), 'in_proj_bias': (24,), 'out_proj.weight': (8, 8), 'out_proj.bias': (8,)}
    """
    if layer.n_kv_heads != layer.n_heads:
        raise ValueError(
            f"PyTorch's nn.MultiheadAttention has no grouped-query attention; this layer has "
            f"n_kv_heads={layer.n_kv_heads} != n_heads={layer.n_heads}"
        )
    state = {}
    if layer.fused:
        state["in_proj_weight"] = np.concatenate([layer.W_q.T, layer.W_k.T, layer.W_v.T], axis=0)
    else:
        for name, W in (("q", layer.W_q), ("k", layer.W_k), ("v", layer.W_v)):
            state[f"{name}_proj_weight"] = np.ascontiguousarray(W.T)
    if layer.bias:
        state["in_proj_bias"] = np.concatenate([layer.b_q, layer.b_k, layer.b_v])
    state["out_proj.weight"] = np.ascontiguousarray(layer.W_o.T)
    if layer.bias:
        state["out_proj.bias"] = layer.b_o.copy()
    return state


def read_torch_state_dict(state_dict: Mapping) -> tuple[dict, dict[str, np.ndarray]]:
    """Read ``nn.MultiheadAttention.state_dict()`` into this package's layout.

    Parameters
    ----------
    state_dict : mapping of str to array_like
        NumPy arrays (or anything ``np.asarray`` converts, such as CPU tensors). float32 or float64.

    Returns
    -------
    config : dict
        ``d_model``, ``kdim``, ``vdim``, ``bias`` and ``dtype``, read off the arrays: the keyword arguments
        of :class:`~mha.layers.MultiHeadAttention` except ``n_heads``, which a state dict does not store.
    weights : dict of str to ndarray
        ``W_q (d_model, d_model)``, ``W_k (kdim, d_model)``, ``W_v (vdim, d_model)``, ``W_o (d_model,
        d_model)`` stored ``(in, out)``, and with ``bias`` the biases ``b_q``, ``b_k``, ``b_v``, ``b_o``
        of shape ``(d_model,)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> state = {"in_proj_weight": rng.normal(size=(12, 4)), "out_proj.weight": rng.normal(size=(4, 4))}
    >>> config, weights = read_torch_state_dict(state)
    >>> config["d_model"], config["bias"], weights["W_q"].shape
    (4, False, (4, 4))
    >>> np.array_equal(weights["W_k"], state["in_proj_weight"][4:8].T)
    True
    """
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"state_dict must be a mapping of names to arrays, got {type(state_dict).__name__}")
    arrays = {name: np.asarray(value) for name, value in state_dict.items()}
    weight_keys = _PACKED if "in_proj_weight" in arrays else _SEPARATE
    has_bias = "in_proj_bias" in arrays or "out_proj.bias" in arrays
    expected = set(weight_keys) | (set(_BIASES) if has_bias else set())
    _check_keys(set(arrays), expected)
    dtype = np.result_type(*arrays.values())
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"state_dict arrays must be float32 or float64, got {dtype}")

    out_w = arrays["out_proj.weight"]
    if out_w.ndim != 2 or out_w.shape[0] != out_w.shape[1]:
        raise ValueError(f"out_proj.weight must have shape (d_model, d_model), got {out_w.shape}")
    d_model = out_w.shape[0]
    if weight_keys is _PACKED:
        kdim = vdim = d_model
        _check_shape(arrays, "in_proj_weight", (3 * d_model, d_model))
        W_q, W_k, W_v = np.split(arrays["in_proj_weight"], 3, axis=0)  # each (d_model, d_model), (out, in)
    else:
        _check_shape(arrays, "q_proj_weight", (d_model, d_model))
        for name in ("k_proj_weight", "v_proj_weight"):
            shape = arrays[name].shape
            if len(shape) != 2 or shape[0] != d_model:
                raise ValueError(f"{name} must have shape (d_model={d_model}, in_features), got {shape}")
        kdim, vdim = arrays["k_proj_weight"].shape[1], arrays["v_proj_weight"].shape[1]
        W_q, W_k, W_v = arrays["q_proj_weight"], arrays["k_proj_weight"], arrays["v_proj_weight"]

    config = {"d_model": d_model, "kdim": kdim, "vdim": vdim, "bias": has_bias, "dtype": dtype}
    # PyTorch stores (out, in) and computes x @ W.T; this package stores (in, out) and computes x @ W.
    weights = {"W_q": W_q.T, "W_k": W_k.T, "W_v": W_v.T, "W_o": out_w.T}
    if has_bias:
        _check_shape(arrays, "in_proj_bias", (3 * d_model,))
        _check_shape(arrays, "out_proj.bias", (d_model,))
        weights["b_q"], weights["b_k"], weights["b_v"] = np.split(arrays["in_proj_bias"], 3)
        weights["b_o"] = arrays["out_proj.bias"]
    return config, weights


def _check_keys(found: set, expected: set) -> None:
    if found == expected:
        return
    if {"bias_k", "bias_v"} & found:
        raise ValueError("layers built with add_bias_kv=True (bias_k, bias_v) are not supported")
    missing, unexpected = sorted(expected - found), sorted(found - expected)
    raise ValueError(
        f"state_dict keys do not match nn.MultiheadAttention's: missing {missing}, unexpected {unexpected} "
        f"(expected exactly {sorted(expected)})"
    )


def _check_shape(arrays: dict, name: str, shape: tuple) -> None:
    if arrays[name].shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arrays[name].shape}")
