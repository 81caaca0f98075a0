"""Exchange weights with PyTorch's ``nn.MultiheadAttention`` without importing PyTorch.

PyTorch stores projections as ``(out_features, in_features)`` and applies them as ``x @ W.T``; this package
stores ``(in, out)`` and applies ``x @ W``. So each matrix is transposed on the way in and out. When
``kdim == vdim == d_model`` PyTorch stacks the three input projections into ``in_proj_weight`` of shape
``(3 * d_model, d_model)``; otherwise it keeps ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight``.
Biases are one ``in_proj_bias`` of shape ``(3 * d_model,)`` and ``out_proj.bias`` in both cases.

Keras 3's ``keras.layers.MultiHeadAttention`` stores each projection as an einsum kernel with the heads as
their own axis: ``query``, ``key`` and ``value`` kernels ``(in_features, n_heads, d_head)`` with biases
``(n_heads, d_head)``, and the output kernel ``(n_heads, d_head, d_model)`` with bias ``(d_model,)``. They
multiply on the right, as here, so converting is a reshape. ``layer.get_weights()`` lists them in that order
(query, key, value, output; kernel before bias), and ``set_weights`` takes the same list.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["to_torch_state_dict", "from_torch_state_dict", "to_keras_weights", "from_keras_weights"]

_PACKED = ("in_proj_weight", "out_proj.weight")
_SEPARATE = ("q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight")
_BIASES = ("in_proj_bias", "out_proj.bias")


def to_torch_state_dict(layer) -> dict[str, np.ndarray]:
    """Return the layer's weights under the keys and layouts of ``nn.MultiheadAttention.state_dict()``.

    Arrays are fresh C-contiguous copies; ``torch.from_numpy`` on each gives a loadable state dict.

    Examples
    --------
    >>> from mha.layers import MultiHeadAttention
    >>> sd = to_torch_state_dict(MultiHeadAttention(8, 2, rng=0))
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


def from_torch_state_dict(state_dict: Mapping, n_heads: int):
    """Build a :class:`~mha.layers.MultiHeadAttention` from ``nn.MultiheadAttention.state_dict()``.

    Parameters
    ----------
    state_dict : mapping of str to array_like
        NumPy arrays (or anything ``np.asarray`` converts, such as CPU tensors). float32 or float64.
    n_heads : int
        Not stored in the state dict; must divide ``d_model``.

    Returns
    -------
    MultiHeadAttention
        ``dtype``, ``d_model``, ``kdim``, ``vdim`` and ``bias`` are read off the arrays.
    """
    from mha.layers import MultiHeadAttention

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
        W_q, W_k, W_v = np.split(arrays["in_proj_weight"], 3, axis=0)
    else:
        _check_shape(arrays, "q_proj_weight", (d_model, d_model))
        for name in ("k_proj_weight", "v_proj_weight"):
            shape = arrays[name].shape
            if len(shape) != 2 or shape[0] != d_model:
                raise ValueError(f"{name} must have shape (d_model={d_model}, in_features), got {shape}")
        kdim, vdim = arrays["k_proj_weight"].shape[1], arrays["v_proj_weight"].shape[1]
        W_q, W_k, W_v = arrays["q_proj_weight"], arrays["k_proj_weight"], arrays["v_proj_weight"]

    layer = MultiHeadAttention(d_model, n_heads, kdim=kdim, vdim=vdim, bias=has_bias, dtype=dtype, rng=0)
    layer.W_q, layer.W_k, layer.W_v, layer.W_o = W_q.T, W_k.T, W_v.T, out_w.T
    if has_bias:
        _check_shape(arrays, "in_proj_bias", (3 * d_model,))
        _check_shape(arrays, "out_proj.bias", (d_model,))
        layer.b_q, layer.b_k, layer.b_v = np.split(arrays["in_proj_bias"], 3)
        layer.b_o = arrays["out_proj.bias"]
    return layer


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


# ---------------------------------------------------------------------------------------------- Keras 3

_KERAS_NAMES = ("query", "key", "value", "attention_output")


def to_keras_weights(layer) -> list[np.ndarray]:
    """Return the layer's weights as ``keras.layers.MultiHeadAttention.get_weights()`` lists them.

    The Keras layer must be built with ``num_heads=n_heads``, ``key_dim=d_head`` (and the default
    ``value_dim``, ``output_shape``), ``use_bias=bias``; then ``keras_layer.set_weights(weights)`` loads them.

    Returns
    -------
    list of ndarray
        Query kernel ``(d_model, n_heads, d_head)`` and bias ``(n_heads, d_head)``; key kernel
        ``(kdim, n_heads, d_head)`` and bias; value kernel ``(vdim, n_heads, d_head)`` and bias; output
        kernel ``(n_heads, d_head, d_model)`` and bias ``(d_model,)``. Biases are left out when the layer
        has none. Fresh copies.

    Examples
    --------
    >>> from mha.layers import MultiHeadAttention
    >>> [w.shape for w in to_keras_weights(MultiHeadAttention(8, 2, rng=0))]
    [(8, 2, 4), (2, 4), (8, 2, 4), (2, 4), (8, 2, 4), (2, 4), (2, 4, 8), (8,)]
    """
    if layer.n_kv_heads != layer.n_heads:
        raise ValueError(
            f"keras.layers.MultiHeadAttention has no grouped-query attention (Keras has a separate "
            f"GroupedQueryAttention layer); this layer has n_kv_heads={layer.n_kv_heads} != "
            f"n_heads={layer.n_heads}"
        )
    h, d_head = layer.n_heads, layer.d_head
    weights = []
    for W, b in ((layer.W_q, layer.b_q), (layer.W_k, layer.b_k), (layer.W_v, layer.b_v)):
        weights.append(W.reshape(W.shape[0], h, d_head).copy())  # (in_features, n_heads, d_head)
        if layer.bias:
            weights.append(b.reshape(h, d_head).copy())  # (n_heads, d_head)
    weights.append(layer.W_o.reshape(h, d_head, layer.d_model).copy())  # (n_heads, d_head, d_model)
    if layer.bias:
        weights.append(layer.b_o.copy())
    return weights


def from_keras_weights(weights):
    """Build a :class:`~mha.layers.MultiHeadAttention` from ``keras.layers.MultiHeadAttention.get_weights()``.

    Parameters
    ----------
    weights : sequence of array_like
        8 arrays (with biases) or 4 (``use_bias=False``), in ``get_weights()`` order: query, key, value and
        output kernels, each followed by its bias. float32 or float64.

    Returns
    -------
    MultiHeadAttention
        ``n_heads``, ``d_model``, ``kdim``, ``vdim``, ``bias`` and ``dtype`` are read off the arrays. The
        Keras layer must use ``key_dim = value_dim = d_model / n_heads`` and output ``d_model`` features.

    Examples
    --------
    >>> from mha.layers import MultiHeadAttention
    >>> layer = from_keras_weights(to_keras_weights(MultiHeadAttention(8, 2, kdim=6, rng=0)))
    >>> layer.n_heads, layer.d_model, layer.kdim, layer.vdim
    (2, 8, 6, 8)
    """
    from mha.layers import MultiHeadAttention

    arrays = [np.asarray(w) for w in weights]
    if len(arrays) not in (4, 8):
        raise ValueError(f"expected the 8 arrays of get_weights() (4 with use_bias=False), got {len(arrays)}")
    has_bias = len(arrays) == 8
    kernels = arrays[::2] if has_bias else arrays
    biases = arrays[1::2] if has_bias else [None] * 4
    dtype = np.result_type(*arrays)
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"Keras weights must be float32 or float64, got {dtype}")
    for name, kernel in zip(_KERAS_NAMES, kernels, strict=True):
        if kernel.ndim != 3:
            raise ValueError(f"the {name} kernel must have 3 axes, got shape {kernel.shape}")
    W_q, W_k, W_v, W_o = kernels
    d_model, n_heads, d_head = W_q.shape
    if n_heads * d_head != d_model:
        raise ValueError(
            f"the query kernel {W_q.shape} = (d_model, num_heads, key_dim) needs num_heads * key_dim == "
            f"d_model for this package's layer; got {n_heads} * {d_head} != {d_model}"
        )
    for name, kernel in (("key", W_k), ("value", W_v)):
        if kernel.shape[1:] != (n_heads, d_head):
            raise ValueError(f"the {name} kernel must have shape (in_features, {n_heads}, {d_head}), "
                             f"got {kernel.shape}")
    if W_o.shape != (n_heads, d_head, d_model):
        raise ValueError(f"the attention_output kernel must have shape {(n_heads, d_head, d_model)} "
                         f"(value_dim = key_dim, output = d_model), got {W_o.shape}")
    layer = MultiHeadAttention(d_model, n_heads, kdim=W_k.shape[0], vdim=W_v.shape[0], bias=has_bias,
                               dtype=dtype, rng=0)
    layer.W_q = W_q.reshape(d_model, d_model)  # heads side by side: (d_model, n_heads * d_head)
    layer.W_k = W_k.reshape(W_k.shape[0], d_model)
    layer.W_v = W_v.reshape(W_v.shape[0], d_model)
    layer.W_o = W_o.reshape(d_model, d_model)  # head i's rows i * d_head ... (i + 1) * d_head - 1
    if has_bias:
        for name, bias, shape in zip(_KERAS_NAMES, biases, [(n_heads, d_head)] * 3 + [(d_model,)],
                                     strict=True):
            if bias.shape != shape:
                raise ValueError(f"the {name} bias must have shape {shape}, got {bias.shape}")
        layer.b_q, layer.b_k, layer.b_v = (b.reshape(d_model) for b in biases[:3])
        layer.b_o = biases[3]
    return layer
