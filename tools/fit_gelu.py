"""Refit the polynomial behind ``mha.gelu_exact``: ``x Φ(x) = x/2 * (1 + tanh(x R(x²)))``.

``R`` is the even function ``atanh(2 Φ(x) - 1) / x``. This script finds the polynomial of a given degree
in ``s = x²`` that minimises the largest weighted error on ``0 < x <= x_max`` (a linear programme), then
measures the error of the finished GELU in float64 and float32 the way the package computes it,
checks that ``R`` has no real root (the package relies on it far outside the fit) and prints the
coefficients for ``mha/feed_forward.py``.

The weight is what an error in ``R`` does to ``x Φ(x)`` relative to ``|x|``: ``d(x Φ)/dR / x =
x (1 - tanh²) / 2``, largest around ``|x| = 1`` and vanishing in both tails: the fit bounds the GELU's
error by a constant times ``|x|``. Needs SciPy (not a dependency of the course):
``python tools/fit_gelu.py --degree 6 --x-max 6`` (the package's coefficients; about 10 s).
"""

from __future__ import annotations

import argparse
import math

import numpy as np


def target(x: np.ndarray) -> np.ndarray:
    """``R(x²) = atanh(erf(x / √2)) / x`` for ``x > 0``, from erfc so that the right tail keeps its digits."""
    from scipy.special import erfc

    tail = erfc(x / math.sqrt(2.0))  # 1 - erf, accurate where erf rounds to 1
    return 0.5 * np.log((2.0 - tail) / tail) / x


def fit(degree: int, x_max: float, points: int = 6000) -> np.ndarray:
    """Coefficients ``r0 .. r_degree`` of ``R(s)``, lowest first, minimising the weighted maximum error."""
    from scipy.optimize import linprog
    from scipy.special import erf

    x = np.linspace(1e-4, x_max, points)
    weight = 0.5 * x * (1.0 - erf(x / math.sqrt(2.0)) ** 2)  # x (1 - tanh²) / 2 at the exact R
    scaled = (x / x_max) ** 2  # s / x_max², in [0, 1]: a well-conditioned basis
    basis = weight[:, None] * np.vander(scaled, degree + 1, increasing=True)  # (points, degree + 1)
    goal = weight * target(x)
    # Variables: the scaled coefficients, then the bound t. Minimise t with |basis @ c - goal| <= t.
    column = -np.ones((len(x), 1))
    constraints = np.vstack([np.hstack([basis, column]), np.hstack([-basis, column])])
    limits = np.concatenate([goal, -goal])
    cost = np.zeros(degree + 2)
    cost[-1] = 1.0
    result = linprog(cost, A_ub=constraints, b_ub=limits, bounds=[(None, None)] * (degree + 1) + [(0, None)])
    if not result.success:
        raise SystemExit(f"the linear programme failed: {result.message}")
    return result.x[:-1] / (x_max * x_max) ** np.arange(degree + 1)


def gelu(x: np.ndarray, coefficients: np.ndarray) -> np.ndarray:
    """The package's evaluation order, in ``x``'s dtype."""
    real = x.dtype.type
    square = x * x
    poly = square * real(coefficients[-1])
    for c in coefficients[-2:0:-1]:
        poly = (poly + real(c)) * square
    poly = (poly + real(coefficients[0])) * x
    return x * (real(0.5) * np.tanh(poly) + real(0.5))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--degree", type=int, default=6)
    parser.add_argument("--x-max", type=float, default=6.0)
    args = parser.parse_args()
    from scipy.special import erfc

    coefficients = fit(args.degree, args.x_max)
    print(f"R(0) = {coefficients[0]:.16f} (exact: sqrt(2/pi) = {math.sqrt(2 / math.pi):.16f})")
    x = np.concatenate([np.linspace(-12.0, 12.0, 240_001), np.geomspace(1e-8, 12.0, 2000)])
    for dtype in (np.float64, np.float32):
        xs = x.astype(dtype)
        exact = 0.5 * xs.astype(np.float64) * erfc(-xs.astype(np.float64) / math.sqrt(2.0))
        error = np.abs(gelu(xs, coefficients) - exact) / np.maximum(1.0, np.abs(xs))
        worst = xs[error.argmax()]
        print(f"{np.dtype(dtype).name}: largest error / max(1, |x|) {error.max():.2e} at x = {worst:.4f}")
    real_roots = [r.real for r in np.roots(coefficients[::-1]) if abs(r.imag) < 1e-12 * max(1.0, abs(r))]
    print("real roots of R:", real_roots or "none (R > 0 everywhere: usable far outside the fit)")
    print("_GELU_R = (" + ", ".join(repr(float(c)) for c in coefficients) + ")")


if __name__ == "__main__":
    main()
