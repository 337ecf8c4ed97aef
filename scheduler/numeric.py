"""The few numerical tools the rating fit needs, without SciPy: a logistic function and its log that never
overflow, the normal distribution's CDF, and a bracketed root finder.

SciPy's optimizer takes a third of a second to import; a local match fits its ladder with these instead
(:mod:`scheduler.ratings`; the tests check them against SciPy's answers).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np


def sigmoid(x: np.ndarray) -> np.ndarray:
    e = np.exp(-np.abs(x))  # never overflows
    return np.asarray(np.where(x >= 0, 1.0 / (1.0 + e), e / (1.0 + e)))


def normal_cdf(z: float) -> float:
    return 0.5 * math.erfc(-z / math.sqrt(2.0))


def root(f: Callable[[float], float], a: float, b: float, xtol: float) -> float:
    """A root of ``f`` between ``a`` and ``b``, where ``f`` changes sign (``f(a) < 0 < f(b)``, or the other
    way), to within ``xtol``: regula falsi with the Illinois step (superlinear, and never leaves the
    bracket), each step at least ``xtol / 2`` inside it so it closes, as Brent's method does. It answers as
    SciPy's brentq does, and keeps SciPy's optimizer (a third of a second to import) out of every command
    that fits a ladder."""
    fa, fb = f(a), f(b)
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    if (fa > 0) == (fb > 0):
        raise ValueError(f"no sign change between {a} and {b}")
    side = 0
    for _ in range(200):
        if abs(b - a) <= xtol:
            break
        lo, hi = min(a, b), max(a, b)
        x = b - fb * (b - a) / (fb - fa)
        if not lo < x < hi:
            x = (a + b) / 2
        x = min(max(x, lo + xtol / 2), hi - xtol / 2)  # a step at least xtol/2 from each end: the bracket closes
        fx = f(x)
        if fx == 0.0:
            return x
        if (fx > 0) == (fb > 0):
            b, fb = x, fx
            if side == -1:
                fa /= 2
            side = -1
        else:
            a, fa = x, fx
            if side == 1:
                fb /= 2
            side = 1
    return (a + b) / 2


def log_sigmoid(x: np.ndarray) -> np.ndarray:
    return np.asarray(-np.logaddexp(0.0, -x))
