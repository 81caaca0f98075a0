"""Rotary positions for contexts longer than the training one: interpolation, NTK-aware scaling and YaRN.

RoPE turns feature pair ``i`` of a query or key at position ``m`` by the angle ``m · θ_i``, with
``θ_i = base ** (-2i / d_head)`` (:func:`mha.positions.rope_frequencies`). A model trained on ``L`` tokens
has seen every pair turn through angles up to ``L · θ_i`` only. For the fast pairs that is many full turns;
for the slow ones, whose wavelength ``2π / θ_i`` exceeds ``L``, part of a turn: past ``L`` they reach
angles training never produced. Each method below rewrites the table of speeds ``θ`` so that a longer
context ``s · L`` stays within what the model knows:

* :func:`position_interpolation` divides every speed by ``s`` (Chen et al., 2023): positions are squeezed
  into the trained range, and neighbouring tokens also end up closer than the model ever saw them;
* :func:`ntk_aware_frequencies` raises the base instead (bloc97, 2023): the fastest pair keeps its speed,
  the slowest is slowed by exactly ``s``, the ones between by less;
* :func:`yarn_frequencies` (Peng et al., 2023) slows only the pairs that turn less than ``alpha`` times
  in ``L`` tokens, keeps those that turn more than ``beta`` times, ramps between, and
  :func:`yarn_attention_factor` sharpens the softmax a little to make up for the longer rows.

A :class:`RotaryTable` carries a table and its attention factor to :class:`mha.variants.ModernAttention`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from mha.positions import rope_frequencies
from mha.typing import ArrayLike, FloatArray
from mha.validation import as_float_array, check_finite, check_positive_int, check_positive_real

__all__ = ["RotaryTable", "SCALING_METHODS", "position_interpolation", "ntk_aware_frequencies",
           "yarn_frequencies", "yarn_attention_factor", "turns_in_context", "scaled_rotary"]

#: The methods :func:`scaled_rotary` knows, in the order the chapter shows them.
SCALING_METHODS = ("none", "interpolation", "ntk", "yarn")


@dataclass(frozen=True)
class RotaryTable:
    """The angular speed of every feature pair, and how much to scale queries and keys.

    Attributes
    ----------
    frequencies : ndarray, shape (d_head // 2,)
        Radians per position of each pair.
    attention_factor : float, default 1.0
        Queries and keys are multiplied by it after the rotation, so every score by its square
        (YaRN's temperature; 1 for the other methods).
    method : str
        Which method made the table (for labels).

    Examples
    --------
    >>> table = RotaryTable(rope_frequencies(4))
    >>> table.d_head, table.wavelengths.round(1)
    (4, array([  6.3, 628.3]))
    """

    frequencies: FloatArray
    attention_factor: float = 1.0
    method: str = field(default="none")

    def __post_init__(self) -> None:
        object.__setattr__(self, "frequencies", _check_speeds(self.frequencies))
        object.__setattr__(self, "attention_factor",
                           check_positive_real(self.attention_factor, "attention_factor"))

    @property
    def d_head(self) -> int:
        """The head width the table serves: two features per frequency."""
        return 2 * self.frequencies.size

    @property
    def wavelengths(self) -> FloatArray:
        """Positions per full turn of each pair: ``2π / θ_i``."""
        return 2 * math.pi / self.frequencies


def _check_speeds(frequencies: ArrayLike) -> FloatArray:
    """A table's angular speeds as float64: one axis, finite and > 0."""
    speeds = np.asarray(as_float_array(frequencies, "frequencies"), dtype=np.float64)
    if speeds.ndim != 1 or speeds.size == 0:
        raise ValueError(f"frequencies must have shape (d_head // 2,), got {speeds.shape}")
    check_finite(speeds, "frequencies")
    if (speeds <= 0).any():
        raise ValueError("every frequency must be > 0 (a pair that never turns carries no position)")
    return speeds


def _check_scale(scale: object) -> float:
    scale = check_positive_real(scale, "scale")
    if scale < 1:
        raise ValueError(f"scale is the factor by which the context grows, >= 1; got {scale}")
    return scale


def position_interpolation(frequencies: ArrayLike, scale: float) -> FloatArray:
    """Position interpolation: every speed divided by ``scale``, i.e. position ``m`` read as ``m / scale``.

    Examples
    --------
    >>> position_interpolation(rope_frequencies(4), 2.0)
    array([0.5  , 0.005])
    """
    return _check_speeds(frequencies) / _check_scale(scale)


def ntk_aware_frequencies(d_head: int, scale: float, *, base: float = 10000.0) -> FloatArray:
    """NTK-aware scaling: the speeds of a larger base, ``base · scale ** (d_head / (d_head - 2))``.

    The exponent is chosen so that the slowest pair (``i = d_head/2 - 1``) slows by exactly ``scale``
    while the fastest (``i = 0``) keeps its speed: local order stays sharp, far positions stay in range.

    Examples
    --------
    >>> fast, slow = ntk_aware_frequencies(4, 2.0) / rope_frequencies(4)
    >>> float(fast), float(slow)
    (1.0, 0.5)
    """
    d_head = check_positive_int(d_head, "d_head")
    if d_head < 4 or d_head % 2:
        raise ValueError(f"d_head must be even and >= 4 (NTK scaling needs two pairs), got {d_head}")
    return rope_frequencies(d_head, base=base * _check_scale(scale) ** (d_head / (d_head - 2)))


def turns_in_context(frequencies: ArrayLike, context: int) -> FloatArray:
    """How many full turns each pair makes over ``context`` positions: ``context · θ_i / 2π``.

    Examples
    --------
    >>> turns_in_context(rope_frequencies(4), 64).round(3)
    array([10.186,  0.102])
    """
    return check_positive_int(context, "context") * _check_speeds(frequencies) / (2 * math.pi)


def yarn_frequencies(frequencies: ArrayLike, scale: float, original_context: int, *, alpha: float = 1.0,
                     beta: float = 32.0) -> FloatArray:
    """YaRN's "NTK-by-parts" table: interpolate the slow pairs, keep the fast ones, ramp in between.

    With ``r_i`` the turns of pair ``i`` over the original context (:func:`turns_in_context`) and
    ``γ_i = clip((r_i - alpha) / (beta - alpha), 0, 1)``, the new speed is
    ``(1 - γ_i) · θ_i / scale + γ_i · θ_i``: pairs that turn fewer than ``alpha`` times are
    interpolated like :func:`position_interpolation`, pairs that turn more than ``beta`` times are left
    alone. The paper's values for Llama are ``alpha = 1``, ``beta = 32``.

    Examples
    --------
    >>> theta = rope_frequencies(8)
    >>> turns_in_context(theta, 64).round(2).tolist()
    [10.19, 1.02, 0.1, 0.01]
    >>> (yarn_frequencies(theta, 4.0, original_context=64) / theta).round(3)  # only the first is on the ramp
    array([0.472, 0.25 , 0.25 , 0.25 ])
    >>> (yarn_frequencies(theta, 4.0, original_context=64, alpha=0.5, beta=8) / theta).round(3)
    array([1.   , 0.302, 0.25 , 0.25 ])
    """
    theta = _check_speeds(frequencies)
    scale = _check_scale(scale)
    original_context = check_positive_int(original_context, "original_context")
    alpha, beta = check_positive_real(alpha, "alpha"), check_positive_real(beta, "beta")
    if beta <= alpha:
        raise ValueError(f"beta must exceed alpha (the ramp runs from alpha to beta turns), got "
                         f"alpha={alpha}, beta={beta}")
    ramp = np.clip((turns_in_context(theta, original_context) - alpha) / (beta - alpha), 0.0, 1.0)
    scaled: FloatArray = (1 - ramp) * theta / scale + ramp * theta
    return scaled


def yarn_attention_factor(scale: float) -> float:
    """YaRN's factor on queries and keys, ``0.1 · ln(scale) + 1``: scores grow by its square.

    A longer row of keys spreads the softmax thinner; scaling the scores up a little restores its
    sharpness (the paper fits the coefficient 0.1 on Llama).

    Examples
    --------
    >>> round(yarn_attention_factor(4.0), 4), yarn_attention_factor(1.0)
    (1.1386, 1.0)
    """
    return 0.1 * math.log(_check_scale(scale)) + 1.0


def scaled_rotary(method: str, d_head: int, *, scale: float = 1.0, original_context: int | None = None,
                  base: float = 10000.0, alpha: float = 1.0, beta: float = 32.0) -> RotaryTable:
    """The rotary table of one of :data:`SCALING_METHODS`, for a context ``scale`` times the original.

    Parameters
    ----------
    method : {"none", "interpolation", "ntk", "yarn"}
    d_head : int
    scale : float, default 1.0
        New context / original context, >= 1.
    original_context : int, optional
        The training context; YaRN needs it to count each pair's turns.
    base, alpha, beta : float
        RoPE's base, and YaRN's ramp (see :func:`yarn_frequencies`).

    Examples
    --------
    >>> table = scaled_rotary("yarn", 16, scale=4.0, original_context=64)
    >>> table.method, round(table.attention_factor, 3), table.frequencies.shape
    ('yarn', 1.139, (8,))
    >>> scaled_rotary("rope", 16)
    Traceback (most recent call last):
    ...
    ValueError: method must be one of ('none', 'interpolation', 'ntk', 'yarn'), got 'rope'
    """
    if method not in SCALING_METHODS:
        raise ValueError(f"method must be one of {SCALING_METHODS}, got {method!r}")
    theta = rope_frequencies(d_head, base=base)
    scale = _check_scale(scale)
    if method == "none":
        return RotaryTable(theta, method=method)
    if method == "interpolation":
        return RotaryTable(position_interpolation(theta, scale), method=method)
    if method == "ntk":
        return RotaryTable(ntk_aware_frequencies(d_head, scale, base=base), method=method)
    if original_context is None:
        raise ValueError("YaRN needs original_context= (the training length) to count each pair's turns")
    return RotaryTable(yarn_frequencies(theta, scale, original_context, alpha=alpha, beta=beta),
                       attention_factor=yarn_attention_factor(scale), method=method)
