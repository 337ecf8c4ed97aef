"""The curvature of the rating likelihood, used at every size: Newton steps, and variances at large size.

:mod:`scheduler.ratings` maximizes its log-likelihood by Newton's method, each step ``information^-1 @
gradient``. A league of a few hundred bots solves that with a dense matrix; a standing ladder of ten
thousand cannot (the dense information is 800 MB and one solve half a minute), but its information is
sparse: a bot's row has an entry for each bot it met and no other. Above :data:`SPARSE_ABOVE` bots the
step is solved by conjugate gradients (:func:`sparse_newton_step`), whose cost follows the pairs that met,
not the square of the bots.

**Variances at large size.** The Wald interval of a rating needs the diagonal of the *inverse*
information, a dense ``n x n`` inverse: at 10,000 bots minutes of CPU and gigabytes. Above
:data:`MARGINAL_MAX` bots the fit uses the **conditional** variance instead: the variance of a bot's
rating were every other bot's rating known exactly, ``1 / I[i, i]``, and for two bots the conditional
variance of their difference given every other bot, from the 2 x 2 block of the information
(:func:`conditional_z`). It is what the bot's own games say about where it stands among its opponents;
it leaves out how unsure those opponents' own ratings are, so it is never wider than the marginal (the
Wald) variance and usually narrower: an interval and a likelihood of superiority read *relative to the
bots met*, not to the whole ladder's scale (``bench/standing.py`` prints the two side by side).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

SPARSE_ABOVE = 500
"""Above this many bots, Newton's steps solve the sparse information (below, a dense solve is quicker)."""
CG_RTOL = 1e-10
"""The residual, relative to the gradient, at which conjugate gradients stop (Newton's step is then exact to
far better than the fit needs: it stops at a gradient of 1e-9)."""
CG_MAX_ITER = 20_000
MARGINAL_MAX = 1500
"""Up to this many bots, intervals and LOS come from the inverse information (the Wald variance, about a
second at this size); above, from the conditional variance (see the module's doc)."""


def newton_step(information: np.ndarray, gradient: np.ndarray) -> np.ndarray:
    """The Newton step ``information^-1 @ gradient``; where the information is singular, the least-squares step.

    The information is singular in floating point far out on a profile: where the only thing holding two bots
    (or two groups that have not met) together is the prior, whose curvature ``s(1-s)`` underflows to zero at
    ratings some 40 natural-log units apart. There the likelihood is flat and the step there is none.
    """
    try:
        step = np.linalg.solve(information, gradient)
    except np.linalg.LinAlgError:
        step = np.linalg.lstsq(information, gradient, rcond=None)[0]
    return np.asarray(step) if np.all(np.isfinite(step)) else np.zeros_like(gradient)


def sparse_newton_step(information: Any, gradient: np.ndarray) -> np.ndarray:
    """:func:`newton_step` on a ``scipy.sparse`` information, by conjugate gradients preconditioned by its
    diagonal; should they not converge, by a sparse LU (a symmetric minimum-degree ordering), and least
    squares (LSQR) where that finds the matrix singular.

    Conjugate gradients cost a product with the information an iteration: tens of iterations where the bots
    that met form a well-connected graph, a thousand or two where the games went only between ladder
    neighbours (a chain), a tenth of a second at 10,000 bots either way. A direct solve is quick on the chain
    but fills in on the connected graph (seconds to minutes): it is the fallback only."""
    from scipy.sparse.linalg import LinearOperator, cg, lsqr, splu

    diagonal = np.maximum(np.asarray(information.diagonal(), dtype=float), 1e-300)
    jacobi = LinearOperator(information.shape, matvec=lambda v: v / diagonal, dtype=float)
    step, failed = cg(information, gradient, M=jacobi, rtol=CG_RTOL, atol=0.0, maxiter=CG_MAX_ITER)
    if failed:
        try:
            lu = splu(information.tocsc(), permc_spec="MMD_AT_PLUS_A", options={"SymmetricMode": True})
            step = lu.solve(gradient)
        except RuntimeError:  # "Factor is exactly singular"
            step = lsqr(information, gradient)[0]
    return np.asarray(step) if np.all(np.isfinite(step)) else np.zeros_like(gradient)


def conditional_sd(information: Any) -> np.ndarray:
    """Per bot, the standard deviation of its rating given every other bot's: ``1 / sqrt(I[i, i])``."""
    return np.asarray(1.0 / np.sqrt(np.maximum(np.asarray(information.diagonal(), dtype=float), 1e-300)))


def off_diagonal(information: Any, a: int, b: int) -> float:
    """``I[a, b]`` of a CSR matrix (0 where ``a`` and ``b`` never met), by a binary search of row ``a``."""
    start, end = information.indptr[a], information.indptr[a + 1]
    row = information.indices[start:end]
    k = int(np.searchsorted(row, b))
    return float(information.data[start + k]) if k < len(row) and row[k] == b else 0.0


def conditional_z(theta: np.ndarray, information: Any, diagonal: np.ndarray, a: int, b: int) -> float:
    """The z-score of ``theta[a] - theta[b]`` with the variance of that difference given every other bot.

    That variance is ``(I_aa + I_bb + 2 I_ab) / (I_aa I_bb - I_ab^2)``, from the inverse of the 2 x 2 block of
    the information: two bots that met often are told apart by their own games (``I_ab`` is minus what their
    games between them weigh), two that never met by what each one's games say of it alone.

    ``information`` is in CSR form with sorted indices, ``diagonal`` its diagonal.
    """
    iaa, ibb, iab = float(diagonal[a]), float(diagonal[b]), off_diagonal(information, a, b)
    det = iaa * ibb - iab * iab
    var = (iaa + ibb + 2 * iab) / det if det > 0 else math.inf
    return float((theta[a] - theta[b]) / math.sqrt(max(var, 1e-12)))
