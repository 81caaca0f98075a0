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
* :func:`yarn_frequencies` (Peng et al., 2023) slows only the pairs that turn few times in ``L`` tokens,
  keeps those that turn many times, ramps between, and :func:`yarn_attention_factor` sharpens the softmax a
  little to make up for the longer rows. Two ramps exist (:func:`yarn_ramp`): the one models run (the YaRN
  authors' code, Hugging Face ``transformers``, DeepSeek-V2, Qwen2.5), linear in the pair *index*, is the
  default; the paper's formula, linear in the number of *turns*, is ``ramp="turns"``.

A :class:`RotaryTable` carries a table and its attention factor to :class:`mha.variants.ModernAttention`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from mha.positions import rope_frequencies
from mha.typing import ArrayLike, FloatArray
from mha.validation import as_float_array, check_finite, check_flag, check_positive_int, check_positive_real

__all__ = ["RotaryTable", "SCALING_METHODS", "YARN_RAMPS", "position_interpolation", "ntk_aware_frequencies",
           "yarn_ramp", "yarn_frequencies", "yarn_attention_factor", "turns_in_context", "scaled_rotary"]

#: The methods :func:`scaled_rotary` knows, in the order the chapter shows them.
SCALING_METHODS = ("none", "interpolation", "ntk", "yarn")
#: YaRN's two ramps (:func:`yarn_ramp`): linear in the pair index, as models run it, or in the turns, as
#: the paper writes it.
YARN_RAMPS = ("index", "turns")


@dataclass(frozen=True)
class RotaryTable:
    """The angular speed of every feature pair, and how much to scale queries and keys.

    Parameters
    ----------
    frequencies : ndarray, shape (d_head // 2,)
        Radians per position of each pair.
    attention_factor : float, default 1.0
        Queries and keys are multiplied by it after the rotation, so every score by its square
        (YaRN's temperature; 1 for the other methods).
    method : str
        Which method made the table (for labels).

    Raises
    ------
    ValueError
        ``frequencies`` not one axis of finite numbers > 0, or ``attention_factor`` not a finite number > 0.
    TypeError
        ``frequencies`` not real numbers.

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

    Parameters
    ----------
    frequencies : array_like, shape (d_head // 2,)
        Angular speeds (radians per position), finite and > 0.
    scale : float
        New context / original context, >= 1.

    Returns
    -------
    ndarray of float64, shape (d_head // 2,)

    Raises
    ------
    ValueError
        ``frequencies`` not finite numbers > 0 on one axis, or ``scale`` below 1 or not finite.
    TypeError
        ``frequencies`` not real numbers.

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

    Parameters
    ----------
    d_head : int
        Even, >= 4.
    scale : float
        New context / original context, >= 1.
    base : float, default 10000.0

    Returns
    -------
    ndarray of float64, shape (d_head // 2,)

    Raises
    ------
    ValueError
        ``d_head`` odd or below 4, ``scale`` below 1, or ``base`` not a finite number > 1.
    TypeError
        ``d_head`` not an integer.

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

    Parameters
    ----------
    frequencies : array_like, shape (d_head // 2,)
        Angular speeds (radians per position), finite and > 0.
    context : int

    Returns
    -------
    ndarray of float64, shape (d_head // 2,)

    Raises
    ------
    ValueError
        ``context`` below 1, or ``frequencies`` not finite numbers > 0 on one axis.
    TypeError
        ``context`` not an integer, or ``frequencies`` not real numbers.

    Examples
    --------
    >>> turns_in_context(rope_frequencies(4), 64).round(3)
    array([10.186,  0.102])
    """
    return check_positive_int(context, "context") * _check_speeds(frequencies) / (2 * math.pi)


def _pair_at_turns(turns: float, d_head: int, original_context: int, base: float) -> float:
    """The (fractional) pair index ``i`` whose pair turns ``turns`` times over ``original_context`` positions.

    Solves ``original_context · base ** (-2i / d_head) / 2π = turns`` for ``i``.
    """
    return d_head * math.log(original_context / (turns * 2 * math.pi)) / (2 * math.log(base))


def yarn_ramp(d_head: int, original_context: int, *, base: float = 10000.0, alpha: float = 1.0,
              beta: float = 32.0, ramp: str = "index", truncate: bool = True) -> FloatArray:
    """Where each pair sits on YaRN's ramp: 1 keeps its speed, 0 is interpolated (divided by the scale).

    Between, :func:`yarn_frequencies` blends the two speeds: ``γ · θ + (1 - γ) · θ / scale``.

    Pairs that turn more than ``beta`` times over the original context keep their speed, pairs that turn
    fewer than ``alpha`` times are interpolated, and the ramp runs between. Where it runs linearly:

    * ``ramp="index"`` (the default), as models run YaRN: the YaRN authors' code (``find_correction_range``
      and ``linear_ramp_mask``), Hugging Face ``transformers`` (``_compute_yarn_parameters``), DeepSeek-V2
      and Qwen2.5. It finds the fractional pair indices at which the turns equal ``beta`` and ``alpha``,
      rounds them outwards (``floor`` and ``ceil``, unless ``truncate=False``), clips them to
      ``[0, d_head - 1]`` (the reference code's bound, a feature count rather than a pair count), and
      ramps linearly in the pair index between them.
    * ``ramp="turns"``, as the paper writes it: ``γ_i = clip((r_i - alpha) / (beta - alpha), 0, 1)``, with
      ``r_i`` the turns of pair ``i`` (:func:`turns_in_context`). Turns fall geometrically with the
      index, so along the index this ramp drops fast after ``beta`` and keeps far less of the middle
      pairs than the index ramp does.

    Parameters
    ----------
    d_head : int
        Even head width: ``d_head // 2`` pairs.
    original_context : int
        The context the model was trained on.
    base : float, default 10000.0
        RoPE's base.
    alpha, beta : float, default 1.0 and 32.0
        The turns below which a pair is interpolated and above which it keeps its speed (the paper's
        values for Llama; the reference code calls them ``beta_slow`` and ``beta_fast``).
    ramp : {"index", "turns"}, default "index"
    truncate : bool, default True
        Round the index ramp's ends outwards to whole pairs, as the reference code does by default;
        ignored by ``ramp="turns"``.

    Returns
    -------
    ndarray, shape (d_head // 2,)
        Between 0 and 1, fastest pair first.

    Raises
    ------
    ValueError
        An unknown ``ramp``, an odd or non-positive ``d_head``, ``base <= 1``, ``original_context < 1``,
        ``alpha`` or ``beta`` not a finite number > 0, or ``beta <= alpha``.
    TypeError
        A ``truncate`` that is not a bool, or a non-integer ``d_head`` or ``original_context``.

    Examples
    --------
    >>> yarn_ramp(16, 32)  # the index ramp runs from pair 0 to pair 2 here
    array([1. , 0.5, 0. , 0. , 0. , 0. , 0. , 0. ])
    >>> yarn_ramp(16, 32, ramp="turns").round(3)  # the paper's: even pair 0 turns only 5 times
    array([0.132, 0.02 , 0.   , 0.   , 0.   , 0.   , 0.   , 0.   ])
    """
    if ramp not in YARN_RAMPS:
        raise ValueError(f"ramp must be one of {YARN_RAMPS}, got {ramp!r}")
    theta = rope_frequencies(d_head, base=base)
    original_context = check_positive_int(original_context, "original_context")
    alpha, beta = check_positive_real(alpha, "alpha"), check_positive_real(beta, "beta")
    truncate = check_flag(truncate, "truncate")
    if beta <= alpha:
        raise ValueError(f"beta must exceed alpha (the ramp runs from alpha to beta turns), got "
                         f"alpha={alpha}, beta={beta}")
    if ramp == "turns":
        kept: FloatArray = np.clip((turns_in_context(theta, original_context) - alpha) / (beta - alpha),
                                   0.0, 1.0)
        return kept
    # The fast end (beta turns) has the lower index, the slow end (alpha turns) the higher.
    fast = _pair_at_turns(beta, d_head, original_context, float(base))
    slow = _pair_at_turns(alpha, d_head, original_context, float(base))
    if truncate:
        fast, slow = math.floor(fast), math.ceil(slow)
    fast, slow = max(fast, 0), min(slow, d_head - 1)
    if fast == slow:
        slow += 0.001  # the reference code's guard against a zero-width ramp
    interpolated = np.clip((np.arange(theta.size) - fast) / (slow - fast), 0.0, 1.0)  # (d_head // 2,)
    kept_index: FloatArray = 1.0 - interpolated
    return kept_index


def yarn_frequencies(d_head: int, scale: float, original_context: int, *, base: float = 10000.0,
                     alpha: float = 1.0, beta: float = 32.0, ramp: str = "index",
                     truncate: bool = True) -> FloatArray:
    """YaRN's "NTK-by-parts" table: interpolate the slow pairs, keep the fast ones, ramp in between.

    With ``γ_i`` where pair ``i`` sits on the ramp (:func:`yarn_ramp`: 1 kept, 0 interpolated), the new
    speed is ``(1 - γ_i) · θ_i / scale + γ_i · θ_i``. The default ramp is the reference code's, linear in
    the pair index, which equals Hugging Face ``transformers``' ``_compute_yarn_parameters`` (computed in
    float64); ``ramp="turns"`` gives the paper's formula. The paper's values for Llama are ``alpha = 1``,
    ``beta = 32``.

    Parameters
    ----------
    d_head : int
        Even head width: ``d_head // 2`` pairs.
    scale : float
        New context / original context, >= 1.
    original_context : int
        The training context.
    base : float, default 10000.0
        RoPE's base.
    alpha, beta : float, default 1.0 and 32.0
        The ramp's ends, in turns; ``beta > alpha``.
    ramp : {"index", "turns"}, default "index"
    truncate : bool, default True
        Round the index ramp's ends outwards to whole pairs (:func:`yarn_ramp`).

    Returns
    -------
    ndarray of float64, shape (d_head // 2,)

    Raises
    ------
    ValueError
        ``d_head`` not a positive even number, ``base``, ``scale`` or context out of range,
        ``beta <= alpha``, or an unknown ``ramp``.
    TypeError
        ``d_head`` or ``original_context`` not an integer, or ``truncate`` not a bool.

    Examples
    --------
    >>> theta = rope_frequencies(8)
    >>> turns_in_context(theta, 64).round(2).tolist()
    [10.19, 1.02, 0.1, 0.01]
    >>> (yarn_frequencies(8, 4.0, original_context=64) / theta).round(3)  # the index ramp
    array([1.   , 0.625, 0.25 , 0.25 ])
    >>> (yarn_frequencies(8, 4.0, original_context=64, ramp="turns") / theta).round(3)  # the paper's
    array([0.472, 0.25 , 0.25 , 0.25 ])
    """
    theta = rope_frequencies(d_head, base=base)
    scale = _check_scale(scale)
    kept = yarn_ramp(d_head, original_context, base=base, alpha=alpha, beta=beta, ramp=ramp,
                     truncate=truncate)
    scaled: FloatArray = (1 - kept) * theta / scale + kept * theta
    return scaled


def yarn_attention_factor(scale: float) -> float:
    """YaRN's factor on queries and keys, ``0.1 · ln(scale) + 1``: scores grow by its square.

    A longer row of keys spreads the softmax thinner; scaling the scores up a little restores its
    sharpness (the paper fits the coefficient 0.1 on Llama). It is the reference code's factor when a
    config sets no ``mscale``. DeepSeek-V2's sets ``mscale = mscale_all_dim = 0.707``: its rotary table then
    gets a factor of 1, and the temperature goes into the softmax scale of every dimension instead.

    Parameters
    ----------
    scale : float
        New context / original context, >= 1.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``scale`` below 1 or not finite.

    Examples
    --------
    >>> round(yarn_attention_factor(4.0), 4), yarn_attention_factor(1.0)
    (1.1386, 1.0)
    """
    return 0.1 * math.log(_check_scale(scale)) + 1.0


def scaled_rotary(method: str, d_head: int, *, scale: float = 1.0, original_context: int | None = None,
                  base: float = 10000.0, alpha: float = 1.0, beta: float = 32.0,
                  ramp: str = "index") -> RotaryTable:
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
        RoPE's base, and YaRN's ramp (see :func:`yarn_ramp`).
    ramp : {"index", "turns"}, default "index"
        YaRN's ramp: the reference code's (linear in the pair index) or the paper's (linear in the turns).

    Returns
    -------
    RotaryTable

    Raises
    ------
    ValueError
        An unknown ``method``, YaRN without ``original_context``, or a size out of range.
    TypeError
        ``d_head`` or ``original_context`` not an integer, or ``truncate`` not a bool.

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
    return RotaryTable(yarn_frequencies(d_head, scale, original_context, base=base, alpha=alpha, beta=beta,
                                        ramp=ramp),
                       attention_factor=yarn_attention_factor(scale), method=method)
