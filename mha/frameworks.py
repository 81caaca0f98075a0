"""Exchange weights with the frameworks' attention layers without importing them.

Pure array conversions: this module never imports :mod:`mha.layers` (the layer's classmethods call it),
nor PyTorch, nor Keras.

PyTorch's ``nn.MultiheadAttention``

PyTorch stores projections as ``(out_features, in_features)`` and applies them as ``x @ W.T``; this package
stores ``(in, out)`` and applies ``x @ W``. So each matrix is transposed on the way in and out. When
``kdim == vdim == d_model`` PyTorch stacks the three input projections into ``in_proj_weight`` of shape
``(3 * d_model, d_model)``; otherwise it keeps ``q_proj_weight``, ``k_proj_weight``, ``v_proj_weight``.
Biases are one ``in_proj_bias`` of shape ``(3 * d_model,)`` and ``out_proj.bias`` in both cases.

Keras 3's ``keras.layers.MultiHeadAttention``

It stores each projection as an einsum kernel with the heads as
their own axis: ``query``, ``key`` and ``value`` kernels ``(in_features, n_heads, d_head)`` with biases
``(n_heads, d_head)``, and the output kernel ``(n_heads, d_head, d_model)`` with bias ``(d_model,)``. They
multiply on the right, as here, so converting is a reshape. ``layer.get_weights()`` lists them in that order
(query, key, value, output; kernel before bias), and ``set_weights`` takes the same list.
``keras.layers.GroupQueryAttention`` stores the same four kernels, its key and value ones with
``num_key_value_heads`` heads: a grouped-query layer here (``n_kv_heads < n_heads``) converts to and from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, Self, cast

import numpy as np

from mha.typing import ArrayLike, FloatArray

__all__ = ["to_torch_state_dict", "read_torch_state_dict", "to_keras_weights", "read_keras_weights",
           "AttentionWeights", "FrameworkWeights"]

_PACKED = ("in_proj_weight", "out_proj.weight")
_SEPARATE = ("q_proj_weight", "k_proj_weight", "v_proj_weight", "out_proj.weight")
_BIASES = ("in_proj_bias", "out_proj.bias")


class AttentionWeights(Protocol):
    """What the converters read from a layer: a :class:`mha.MultiHeadAttention` has all of it.

    Parameters
    ----------
    *args, **kwargs
        Refused: a protocol describes other classes and makes no instances.

    Raises
    ------
    TypeError
        On any attempt to instantiate the protocol itself.

    Examples
    --------
    >>> import mha
    >>> layer: AttentionWeights = mha.MultiHeadAttention(8, 2, n_kv_heads=1, rng=0)
    >>> layer.d_head, layer.n_kv_heads, layer.W_k.shape
    (4, 1, (8, 4))
    """

    @property
    def d_model(self) -> int: """Width of the queries and of the output."""
    @property
    def d_head(self) -> int: """Width of one head: ``d_model // n_heads``."""
    @property
    def n_heads(self) -> int: """Number of query heads."""
    @property
    def n_kv_heads(self) -> int: """Number of key/value heads, dividing ``n_heads``."""
    @property
    def fused(self) -> bool: """True when ``kdim == vdim == d_model``: PyTorch packs q, k, v."""
    @property
    def W_q(self) -> FloatArray: """Query projection, ``(d_model, d_model)``."""
    @property
    def W_k(self) -> FloatArray: """Key projection, ``(kdim, n_kv_heads * d_head)``."""
    @property
    def W_v(self) -> FloatArray: """Value projection, ``(vdim, n_kv_heads * d_head)``."""
    @property
    def W_o(self) -> FloatArray: """Output projection, ``(d_model, d_model)``."""
    @property
    def b_q(self) -> FloatArray | None: """Query bias ``(d_model,)``, or None."""
    @property
    def b_k(self) -> FloatArray | None: """Key bias ``(n_kv_heads * d_head,)``, or None."""
    @property
    def b_v(self) -> FloatArray | None: """Value bias ``(n_kv_heads * d_head,)``, or None."""
    @property
    def b_o(self) -> FloatArray | None: """Output bias ``(d_model,)``, or None."""


def to_torch_state_dict(layer: AttentionWeights) -> dict[str, FloatArray]:
    """Return the layer's weights under the keys and layouts of ``nn.MultiheadAttention.state_dict()``.

    Arrays are fresh C-contiguous copies; ``torch.from_numpy`` on each gives a loadable state dict.

    Parameters
    ----------
    layer : AttentionWeights
        A layer with as many key/value heads as query heads.

    Returns
    -------
    dict of str to ndarray
        ``in_proj_weight (3 * d_model, d_model)`` for a fused layer, else ``q_proj_weight``,
        ``k_proj_weight (d_model, kdim)`` and ``v_proj_weight (d_model, vdim)``; ``out_proj.weight``; with
        biases ``in_proj_bias (3 * d_model,)`` and ``out_proj.bias (d_model,)``.

    Raises
    ------
    ValueError
        ``n_kv_heads != n_heads``: PyTorch's layer has no grouped-query attention.

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
    state: dict[str, FloatArray] = {}
    if layer.fused:
        state["in_proj_weight"] = np.concatenate([layer.W_q.T, layer.W_k.T, layer.W_v.T], axis=0)
    else:
        for name, W in (("q", layer.W_q), ("k", layer.W_k), ("v", layer.W_v)):
            state[f"{name}_proj_weight"] = W.T.copy()  # a copy even where W.T is already contiguous
    if layer.b_q is not None and layer.b_k is not None and layer.b_v is not None:
        state["in_proj_bias"] = np.concatenate([layer.b_q, layer.b_k, layer.b_v])
    state["out_proj.weight"] = layer.W_o.T.copy()
    if layer.b_o is not None:
        state["out_proj.bias"] = layer.b_o.copy()
    return state


def read_torch_state_dict(state_dict: Mapping[str, ArrayLike]
                          ) -> tuple[dict[str, Any], dict[str, FloatArray]]:
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

    Raises
    ------
    TypeError
        ``state_dict`` is not a mapping, or holds an array that is not float32 or float64.
    ValueError
        Keys other than ``nn.MultiheadAttention``'s (a whole model's state dict, ``add_bias_kv``), shapes
        that do not fit together, or NaN or infinities.

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
    found = set(state_dict)
    weight_keys = _PACKED if "in_proj_weight" in found else _SEPARATE
    has_bias = "in_proj_bias" in found or "out_proj.bias" in found
    expected = set(weight_keys) | (set(_BIASES) if has_bias else set())
    _check_keys(found, expected)
    arrays = {name: _float_array(value, f"state_dict[{name!r}]") for name, value in state_dict.items()}
    dtype = np.result_type(*arrays.values())

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


def _check_keys(found: set[str], expected: set[str]) -> None:
    if found == expected:
        return
    if {"bias_k", "bias_v"} & found:
        raise ValueError("layers built with add_bias_kv=True (bias_k, bias_v) are not supported")
    prefixes = {name[: -len(key)] for name in found for key in _PACKED + _SEPARATE + _BIASES
                if name.endswith("." + key)}
    if prefixes and not found & expected:  # a whole model's state dict, e.g. "encoder.attn.in_proj_weight"
        prefix = sorted(prefixes)[0]
        raise ValueError(
            f"state_dict keys start with {prefix!r}: this looks like a whole model's state dict. Pass one "
            f"attention module's, e.g. model.{prefix.rstrip('.')}.state_dict() or "
            f"{{k.removeprefix({prefix!r}): v for k, v in state_dict.items() if k.startswith({prefix!r})}}"
        )
    missing, unexpected = sorted(expected - found), sorted(found - expected)
    raise ValueError(
        f"state_dict keys do not match nn.MultiheadAttention's: missing {missing}, unexpected {unexpected} "
        f"(expected exactly {sorted(expected)})"
    )


def _float_array(value: ArrayLike, name: str) -> FloatArray:
    """``value`` as a finite float32 or float64 array; errors name the weight (``name``) and the fix."""
    try:
        array = np.asarray(value)
    except TypeError as error:  # e.g. a bfloat16 tensor, which NumPy has no dtype for
        raise TypeError(f"{name} cannot become a NumPy array ({error}); convert it to float32 or float64 "
                        f"first, e.g. tensor.float()") from None
    if array.dtype not in (np.float32, np.float64):
        raise TypeError(f"{name} must be float32 or float64, got {array.dtype}; convert it first, "
                        f"e.g. tensor.float() or array.astype(np.float32)")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} holds NaN or infinite values")
    return array


def _check_shape(arrays: dict[str, FloatArray], name: str, shape: tuple[int, ...]) -> None:
    if arrays[name].shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arrays[name].shape}")


class FrameworkWeights:
    """The conversions a layer inherits (:class:`mha.MultiHeadAttention` does): its weights to and from
    ``torch.nn.MultiheadAttention`` and ``keras.layers.MultiHeadAttention``.

    The class methods build a layer of the class they are called on, so a subclass gets its own kind.

    Examples
    --------
    >>> import mha
    >>> layer = mha.MultiHeadAttention(8, 2, rng=0)
    >>> twin = mha.MultiHeadAttention.from_keras_weights(layer.to_keras_weights())
    >>> type(twin).__name__, np.array_equal(twin.W_o, layer.W_o)
    ('MultiHeadAttention', True)
    """

    @classmethod
    def from_torch_state_dict(cls, state_dict: Mapping[str, ArrayLike], n_heads: int) -> Self:
        """A layer (of ``cls``) from ``torch.nn.MultiheadAttention.state_dict()`` as NumPy arrays.

        Parameters
        ----------
        state_dict : mapping of str to array_like
            As :func:`read_torch_state_dict` reads it.
        n_heads : int
            Not stored in a state dict: the PyTorch layer's ``num_heads``.

        Returns
        -------
        FrameworkWeights
            A new layer of the class this is called on, holding the weights.

        Raises
        ------
        ValueError
            Keys or shapes that are not ``nn.MultiheadAttention``'s, NaN or infinities, ``n_heads`` below 1 or
            not dividing ``d_model``.
        TypeError
            ``state_dict`` is not a mapping, holds arrays other than float32 or float64, or ``n_heads`` is
            not an integer.

        Examples
        --------
        >>> import mha
        >>> state = mha.MultiHeadAttention(8, 2, rng=0).to_torch_state_dict()
        >>> mha.MultiHeadAttention.from_torch_state_dict(state, n_heads=2).d_head
        4
        """
        config, weights = read_torch_state_dict(state_dict)
        return cls._with_weights(weights, n_heads=n_heads, **config)

    def to_torch_state_dict(self: AttentionWeights) -> dict[str, FloatArray]:
        """The weights as ``nn.MultiheadAttention.state_dict()`` has them (:func:`to_torch_state_dict`).

        Returns
        -------
        dict of str to ndarray
            Fresh copies, ``(out, in)`` as PyTorch stores them.

        Raises
        ------
        ValueError
            A grouped-query layer (``n_kv_heads != n_heads``): PyTorch's layer has none.

        Examples
        --------
        >>> import mha
        >>> mha.MultiHeadAttention(8, 2, kdim=6, rng=0).to_torch_state_dict()["k_proj_weight"].shape
        (8, 6)
        """
        return to_torch_state_dict(self)

    @classmethod
    def from_keras_weights(cls, weights: Sequence[ArrayLike]) -> Self:
        """A layer (of ``cls``) from Keras's ``MultiHeadAttention`` (or ``GroupQueryAttention``) weights.

        Heads and widths are read off the kernels.

        Parameters
        ----------
        weights : sequence of array_like
            ``get_weights()``'s list, as :func:`read_keras_weights` reads it.

        Returns
        -------
        FrameworkWeights
            A new layer of the class this is called on, holding the weights.

        Raises
        ------
        ValueError
            Not 4 or 8 arrays, kernels or biases of shapes that do not fit together, NaN or infinities.
        TypeError
            ``weights`` is a mapping, or holds arrays other than float32 or float64.

        Examples
        --------
        >>> import mha
        >>> weights = mha.MultiHeadAttention(8, 4, n_kv_heads=2, rng=0).to_keras_weights()
        >>> layer = mha.MultiHeadAttention.from_keras_weights(weights)
        >>> layer.n_heads, layer.n_kv_heads
        (4, 2)
        """
        config, arrays = read_keras_weights(weights)
        return cls._with_weights(arrays, **config)

    def to_keras_weights(self: AttentionWeights) -> list[FloatArray]:
        """The weights as Keras's ``get_weights()`` lists them (:func:`to_keras_weights`).

        Returns
        -------
        list of ndarray
            Kernels with the heads as their own axis, each followed by its bias when the layer has one.

        Examples
        --------
        >>> import mha
        >>> len(mha.MultiHeadAttention(8, 2, rng=0).to_keras_weights())
        8
        """
        return to_keras_weights(self)

    @classmethod
    def _with_weights(cls, weights: Mapping[str, FloatArray], **config: Any) -> Self:
        layer = cast(Any, cls)(rng=0, **config)  # a layer's constructor: (d_model, n_heads, ..., rng, dtype)
        for name, value in weights.items():
            setattr(layer, name, value)
        return cast(Self, layer)


# ---------------------------------------------------------------------------------------------- Keras 3

_KERAS_NAMES = ("query", "key", "value", "attention_output")


def to_keras_weights(layer: AttentionWeights) -> list[FloatArray]:
    """Return the layer's weights as ``keras.layers.MultiHeadAttention.get_weights()`` lists them.

    The Keras layer must be built with ``num_heads=n_heads``, ``key_dim=d_head`` (and the default
    ``value_dim``, ``output_shape``, ``attention_axes``), ``use_bias=bias``; then
    ``keras_layer.set_weights(weights)`` loads them. (Other ``attention_axes`` keep the same kernels but
    attend over other axes: the weights load, the layer computes something else.)
    A grouped-query layer (``n_kv_heads < n_heads``) gives the weights of
    ``keras.layers.GroupQueryAttention(head_dim=d_head, num_query_heads=n_heads,
    num_key_value_heads=n_kv_heads)``, which shares each key/value head among consecutive query heads too.

    Parameters
    ----------
    layer : AttentionWeights

    Returns
    -------
    list of ndarray
        Query kernel ``(d_model, n_heads, d_head)`` and bias ``(n_heads, d_head)``; key kernel
        ``(kdim, n_kv_heads, d_head)`` and bias ``(n_kv_heads, d_head)``; value kernel ``(vdim, n_kv_heads,
        d_head)`` and bias; output kernel ``(n_heads, d_head, d_model)`` and bias ``(d_model,)``. Biases are
        left out when the layer has none. Fresh copies.

    Examples
    --------
    >>> import mha
    >>> [w.shape for w in to_keras_weights(mha.MultiHeadAttention(8, 2, rng=0))]
    [(8, 2, 4), (2, 4), (8, 2, 4), (2, 4), (8, 2, 4), (2, 4), (2, 4, 8), (8,)]
    >>> [w.shape for w in to_keras_weights(mha.MultiHeadAttention(8, 4, n_kv_heads=2, bias=False, rng=0))]
    [(8, 4, 2), (8, 2, 2), (8, 2, 2), (4, 2, 8)]
    """
    d_head = layer.d_head
    weights: list[FloatArray] = []
    for W, b, heads in ((layer.W_q, layer.b_q, layer.n_heads), (layer.W_k, layer.b_k, layer.n_kv_heads),
                        (layer.W_v, layer.b_v, layer.n_kv_heads)):
        weights.append(W.reshape(W.shape[0], heads, d_head).copy())  # (in_features, heads, d_head)
        if b is not None:
            weights.append(b.reshape(heads, d_head).copy())  # (heads, d_head)
    W_o = layer.W_o.reshape(layer.n_heads, d_head, layer.d_model)  # (n_heads, d_head, d_model)
    weights.append(W_o.copy())
    if layer.b_o is not None:
        weights.append(layer.b_o.copy())
    return weights


def read_keras_weights(weights: Sequence[ArrayLike]) -> tuple[dict[str, Any], dict[str, FloatArray]]:
    """Read ``keras.layers.MultiHeadAttention.get_weights()`` into this package's layout.

    ``keras.layers.GroupQueryAttention.get_weights()`` is read too: its key and value kernels have fewer
    heads (``num_key_value_heads``), which becomes the layer's ``n_kv_heads``.

    Parameters
    ----------
    weights : sequence of array_like
        8 arrays (with biases) or 4 (``use_bias=False``), in ``get_weights()`` order: query, key, value and
        output kernels, each followed by its bias. float32 or float64.

    Returns
    -------
    config : dict
        ``d_model``, ``n_heads``, ``n_kv_heads``, ``kdim``, ``vdim``, ``bias`` and ``dtype``, read off the
        arrays: the keyword arguments of :class:`~mha.layers.MultiHeadAttention`. The Keras layer must use
        ``key_dim = value_dim = d_model / n_heads`` and output ``d_model`` features.
    weights : dict of str to ndarray
        ``W_q``, ``W_k``, ``W_v``, ``W_o`` stored ``(in, out)`` with the heads side by side, and with
        ``bias`` the biases ``b_q`` and ``b_o`` of shape ``(d_model,)``, ``b_k`` and ``b_v`` of shape
        ``(n_kv_heads * d_head,)``.

    Raises
    ------
    TypeError
        ``weights`` is a mapping, or holds an array that is not float32 or float64.
    ValueError
        Not 4 or 8 arrays, kernels or biases of shapes that do not fit together (``key_dim * num_heads``
        other than the model width, key/value heads not dividing the query heads), NaN or infinities.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> kernels = [rng.normal(size=s) for s in ((8, 2, 4), (6, 2, 4), (8, 2, 4), (2, 4, 8))]
    >>> config, weights = read_keras_weights(kernels)
    >>> config["n_heads"], config["kdim"], config["bias"], weights["W_k"].shape
    (2, 6, False, (6, 8))
    """
    if isinstance(weights, Mapping):
        raise TypeError("Keras weights are a list in get_weights() order, not a mapping; for a PyTorch "
                        "state dict use MultiHeadAttention.from_torch_state_dict(state_dict, n_heads)")
    arrays = [_float_array(w, f"Keras weight {i}") for i, w in enumerate(weights)]
    if len(arrays) not in (4, 8):
        raise ValueError(f"expected the 8 arrays of get_weights() (4 with use_bias=False), got {len(arrays)}")
    has_bias = len(arrays) == 8
    kernels = arrays[::2] if has_bias else arrays
    dtype = np.result_type(*arrays)
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
    n_kv_heads = W_k.shape[1]  # fewer than n_heads in Keras's GroupQueryAttention
    if n_heads % n_kv_heads or W_k.shape[2] != d_head:
        raise ValueError(f"the key kernel must have shape (in_features, key/value heads, {d_head}) with a "
                         f"number of heads dividing num_heads={n_heads}, got {W_k.shape}")
    if W_v.shape[1:] != (n_kv_heads, d_head):
        raise ValueError(f"the value kernel must have shape (in_features, {n_kv_heads}, {d_head}), the key "
                         f"kernel's heads, got {W_v.shape}")
    if W_o.shape != (n_heads, d_head, d_model):
        raise ValueError(f"the attention_output kernel must have shape {(n_heads, d_head, d_model)} "
                         f"(value_dim = key_dim, output = d_model), got {W_o.shape}")
    config = {"d_model": d_model, "n_heads": n_heads, "n_kv_heads": n_kv_heads, "kdim": W_k.shape[0],
              "vdim": W_v.shape[0], "bias": has_bias, "dtype": dtype}
    # Keras keeps the heads as their own axis; here they sit side by side: a reshape, no transpose.
    d_kv = n_kv_heads * d_head
    out = {"W_q": W_q.reshape(d_model, d_model),  # (d_model, n_heads * d_head)
           "W_k": W_k.reshape(W_k.shape[0], d_kv),  # (kdim, n_kv_heads * d_head)
           "W_v": W_v.reshape(W_v.shape[0], d_kv),
           "W_o": W_o.reshape(d_model, d_model)}  # head i's rows: i * d_head ... (i + 1) * d_head - 1
    if has_bias:
        shapes = [(n_heads, d_head), (n_kv_heads, d_head), (n_kv_heads, d_head), (d_model,)]
        for name, bias, shape in zip(_KERAS_NAMES, arrays[1::2], shapes, strict=True):
            if bias.shape != shape:
                raise ValueError(f"the {name} bias must have shape {shape}, got {bias.shape}")
        out["b_q"] = arrays[1].reshape(d_model)  # (n_heads * d_head,)
        out["b_k"], out["b_v"] = arrays[3].reshape(d_kv), arrays[5].reshape(d_kv)  # (n_kv_heads * d_head,)
        out["b_o"] = arrays[7]
    return config, out
