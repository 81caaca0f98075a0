"""Linear attention: the softmax replaced by a feature map, so that attention becomes a running sum.

Softmax attention weighs key ``j`` for query ``i`` by ``exp(q_i · k_j)``. Katharopoulos et al. (2020) use
``φ(q_i) · φ(k_j)`` instead, with a feature map ``φ`` whose values are positive (``elu(x) + 1``). The sum
over keys then factors::

    out_i = Σ_j φ(q_i)·φ(k_j) v_j / Σ_j φ(q_i)·φ(k_j) = φ(q_i) S / φ(q_i) z
    with  S = Σ_j φ(k_j) v_jᵀ  and  z = Σ_j φ(k_j)

:func:`linear_attention` computes it in parallel; :func:`linear_attention_recurrent` as a recurrence over
the tokens, carrying only ``S`` (``d_head × d_v``) and ``z`` (``d_head``): a state whose size does not
grow with the sequence, unlike a KV cache. Both give the same numbers (the tests hold them to 1e-10).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mha.attention import check_qkv
from mha.masks import causal_mask
from mha.typing import ArrayLike, FloatArray
from mha.validation import check_flag, check_positive_real

__all__ = ["elu_feature_map", "linear_attention", "linear_attention_recurrent"]

FeatureMap = Callable[[FloatArray], FloatArray]


def elu_feature_map(x: ArrayLike) -> FloatArray:
    """``elu(x) + 1``: ``x + 1`` for positive ``x``, ``exp(x)`` otherwise; always > 0, smooth at 0.

    Parameters
    ----------
    x : array_like, shape (..., d_head)
        Queries or keys.

    Returns
    -------
    ndarray, same shape as ``x``

    Examples
    --------
    >>> elu_feature_map(np.array([-2.0, 0.0, 3.0])).round(3)
    array([0.135, 1.   , 4.   ])
    """
    x = np.asarray(x)
    return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))


def linear_attention(q: ArrayLike, k: ArrayLike, v: ArrayLike, *, causal: bool = False,
                     feature_map: FeatureMap = elu_feature_map, eps: float = 1e-6) -> FloatArray:
    """Linear attention, all positions at once.

    Parameters
    ----------
    q : array_like, shape (..., seq_q, d_head)
    k : array_like, shape (..., seq_k, d_head)
    v : array_like, shape (..., seq_k, d_v)
    causal : bool, default False
        Query ``i`` mixes keys ``0 .. i`` only (with ``seq_q == seq_k``). Computed here with the
        ``(seq_q, seq_k)`` matrix of ``φ(q)·φ(k)`` and the causal mask, to show that it is attention
        with another kernel; :func:`linear_attention_recurrent` never builds that matrix.
    feature_map : callable, default :func:`elu_feature_map`
        ``φ``, applied to the last axis: must return finite values >= 0 with the leading shape of its
        input (the weights of each row are ``φ(q_i)·φ(k_j)``, normalised; a negative feature could make a
        normaliser 0 and a "weight" huge).
    eps : float, default 1e-6
        Added to each row's normaliser.

    Returns
    -------
    ndarray, shape (..., seq_q, d_v)

    Raises
    ------
    ValueError
        Shapes that do not fit, NaN or infinities in ``q``, ``k`` or ``v``, ``eps`` not a finite number
        > 0, ``causal`` with ``seq_q != seq_k``, or a ``feature_map`` whose values are of the wrong shape,
        negative or not finite.
    TypeError
        An input that is not real numbers, a ``causal`` that is not a bool, or a ``feature_map`` that is
        not callable.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.standard_normal((3, 2, 5, 4))
    >>> linear_attention(q, k, v, causal=True).shape
    (2, 5, 4)
    """
    q, k, v = check_qkv(q, k, v)
    eps = check_positive_real(eps, "eps")
    phi_q, phi_k = _features(feature_map, q, "q"), _features(feature_map, k, "k")
    if not check_flag(causal, "causal"):
        state = np.swapaxes(phi_k, -1, -2) @ v  # (..., d_head, d_v): Σ_j φ(k_j) v_jᵀ, once for every query
        normaliser = phi_k.sum(axis=-2)[..., :, None]  # (..., d_head, 1): Σ_j φ(k_j)
        everyone: FloatArray = (phi_q @ state) / (phi_q @ normaliser + eps)
        return everyone
    if q.shape[-2] != k.shape[-2]:
        raise ValueError(f"causal linear attention needs seq_q == seq_k, got q {q.shape} and k {k.shape}")
    kernel = phi_q @ np.swapaxes(phi_k, -1, -2)  # (..., seq_q, seq_k): φ(q_i)·φ(k_j) >= 0
    kernel = kernel * causal_mask(q.shape[-2])  # the future gets weight 0
    past: FloatArray = (kernel @ v) / (kernel.sum(axis=-1, keepdims=True) + eps)
    return past


def _features(feature_map: FeatureMap, x: FloatArray, name: str) -> FloatArray:
    """``feature_map(x)``, refused unless it is a float array of finite values >= 0, one row per vector."""
    if not callable(feature_map):
        raise TypeError(f"feature_map must be a function of an array, got {type(feature_map).__name__}")
    phi = np.asarray(feature_map(x))
    if phi.dtype.kind != "f" or phi.ndim != x.ndim or phi.shape[:-1] != x.shape[:-1]:
        raise ValueError(f"feature_map must return a float array of shape {x.shape[:-1]} + (features,) for "
                         f"{name} of shape {x.shape}, got {phi.dtype} {phi.shape}")
    finite = np.isfinite(phi)
    if not finite.all() or (phi < 0).any():
        got = f"{int((~finite).sum())} NaN or infinite values" if not finite.all() else \
            f"values down to {float(phi.min()):.3g}"
        raise ValueError(f"feature_map must return finite values >= 0 (φ(q)·φ(k) is a weight before it is "
                         f"normalised), got {got} for {name}: use elu_feature_map (elu(x) + 1), or make "
                         "yours positive (np.exp, relu)")
    features: FloatArray = phi
    return features


def linear_attention_recurrent(q: ArrayLike, k: ArrayLike, v: ArrayLike, *,
                               feature_map: FeatureMap = elu_feature_map, eps: float = 1e-6,
                               return_state: bool = False,
                               ) -> FloatArray | tuple[FloatArray, tuple[FloatArray, FloatArray]]:
    """Causal linear attention as a recurrence: one token at a time, a state of fixed size.

    ``S_t = S_{t-1} + φ(k_t) v_tᵀ``, ``z_t = z_{t-1} + φ(k_t)``,
    ``out_t = φ(q_t) S_t / (φ(q_t) · z_t + eps)``.
    The loop over tokens is the point: each step costs ``O(d_head · d_v)`` however long the past, like an
    RNN. Equal to ``linear_attention(q, k, v, causal=True)``.

    Parameters
    ----------
    q, k, v : array_like, shapes (..., seq, d_head), (..., seq, d_head), (..., seq, d_v)
    feature_map, eps
        As in :func:`linear_attention`.
    return_state : bool, default False
        Also return the final ``(S, z)``: shapes ``(..., d_head, d_v)`` and ``(..., d_head)``.

    Returns
    -------
    out : ndarray, shape (..., seq, d_v)
    state : tuple of ndarray, only with ``return_state=True``

    Raises
    ------
    ValueError
        As :func:`linear_attention`, and ``seq_q != seq_k``.
    TypeError
        As :func:`linear_attention`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> q, k, v = rng.standard_normal((3, 6, 4))
    >>> out, (S, z) = linear_attention_recurrent(q, k, v, return_state=True)
    >>> np.allclose(out, linear_attention(q, k, v, causal=True)), S.shape, z.shape
    (True, (4, 4), (4,))
    """
    q, k, v = check_qkv(q, k, v)
    eps = check_positive_real(eps, "eps")
    if q.shape[-2] != k.shape[-2]:
        raise ValueError(f"the recurrence reads one key per query: seq_q must equal seq_k, got {q.shape}, "
                         f"{k.shape}")
    phi_q, phi_k = _features(feature_map, q, "q"), _features(feature_map, k, "k")
    lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    S = np.zeros(lead + (q.shape[-1], v.shape[-1]), dtype=q.dtype)  # (..., d_head, d_v)
    z = np.zeros(lead + (q.shape[-1],), dtype=q.dtype)  # (..., d_head)
    out = np.empty(lead + (q.shape[-2], v.shape[-1]), dtype=q.dtype)  # (..., seq, d_v)
    for t in range(q.shape[-2]):
        S = S + phi_k[..., t, :, None] * v[..., t, None, :]  # add φ(k_t) v_tᵀ
        z = z + phi_k[..., t, :]
        numerator = (phi_q[..., t, None, :] @ S)[..., 0, :]  # (..., d_v)
        out[..., t, :] = numerator / ((phi_q[..., t, :] * z).sum(axis=-1, keepdims=True) + eps)
    return (out, (S, z)) if return_state else out
