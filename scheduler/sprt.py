"""Is version 2 better than version 1? A pentanomial sequential probability ratio test.

Two bots play mirrored pairs (one deal, seats swapped) until the evidence is
enough to decide between H0: the challenger is ``elo0`` stronger than the
baseline (usually 0: no better) and H1: it is ``elo1`` stronger, with error
rates ``alpha`` (accepting H1 when H0 holds) and ``beta`` (the other way), as
chess engine testing does (fishtest's GSPRT).

Each pair is one observation: the challenger's pair score 0, 1/4, 1/2, 3/4 or 1
(the average of its two games; a *pentanomial* outcome). The log-likelihood
ratio compares the most likely pentanomial distributions whose means are the
scores ``elo0`` and ``elo1`` predict (the multinomial maximum-likelihood
distribution with a given mean), which accounts for any correlation between the
two games of a pair. The test stops at ``log(beta / (1 - alpha))`` (accept H0)
or ``log((1 - beta) / alpha)`` (accept H1).

>>> test = SPRT(elo0=0, elo1=50, alpha=0.05, beta=0.05)
>>> test.decide([0, 1, 10, 20, 30]).decision  # mostly won pairs: clearly better
'H1'
>>> test.decide([10, 20, 50, 20, 10]).decision  # as often ahead as behind: no better
'H0'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
"""The challenger's pair score for pentanomial outcomes 0..4 (0: lost both games, 4: won both)."""
EPSILON = 1e-3
"""Added to every pentanomial count, as fishtest does, so an outcome not seen yet is not impossible."""


def expected_score(elo: float) -> float:
    """The score a bot ``elo`` points stronger expects (logistic Elo)."""
    return 1 / (1 + 10 ** (-elo / 400))


def elo_of(score: float) -> float:
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400 * math.log10(1 / score - 1)


def constrained_mle(freq: Sequence[float], mean: float) -> list[float]:
    """The distribution on :data:`SCORES` closest to ``freq`` (maximum likelihood) with this mean.

    It is ``freq[i] / (1 + lam * (score[i] - mean))`` for the ``lam`` that makes the mean right.
    """
    shifted = [s - mean for s in SCORES]
    if all(x >= 0 for x in shifted) or all(x <= 0 for x in shifted):
        raise ValueError(f"a mean of {mean} is out of reach of pair scores 0..1")

    def moment(lam: float) -> float:
        return sum(f * x / (1 + lam * x) for f, x in zip(freq, shifted, strict=True))

    lo = -1 / max(shifted) + 1e-9
    hi = -1 / min(shifted) - 1e-9
    from scipy.optimize import brentq  # SciPy loads only when an SPRT league needs it, not for every command

    lam = brentq(moment, lo, hi, xtol=1e-12)
    return [f / (1 + lam * x) for f, x in zip(freq, shifted, strict=True)]


@dataclass(frozen=True)
class Decision:
    decision: str
    """``H1`` (the challenger is better by elo1), ``H0`` (not better than elo0) or ``none`` (keep playing)."""
    llr: float
    lower: float
    upper: float
    pairs: int
    elo: float
    elo_low: float
    elo_high: float
    """The challenger's Elo over the baseline from its mean pair score, with a 95% interval."""

    def to_json(self) -> dict[str, object]:
        return {
            "decision": self.decision,
            "llr": round(self.llr, 3),
            "bounds": [round(self.lower, 3), round(self.upper, 3)],
            "pairs": self.pairs,
            "games": 2 * self.pairs,
            "elo": round(self.elo, 1),
            "elo_interval": [round(self.elo_low, 1), round(self.elo_high, 1)],
        }


@dataclass(frozen=True)
class SPRT:
    elo0: float = 0.0
    elo1: float = 50.0
    alpha: float = 0.05
    beta: float = 0.05

    def __post_init__(self) -> None:
        if not self.elo1 > self.elo0:
            raise ValueError(f"elo1 ({self.elo1}) must be above elo0 ({self.elo0})")
        if not (0 < self.alpha < 0.5 and 0 < self.beta < 0.5):
            raise ValueError("alpha and beta must be between 0 and 0.5")

    @property
    def bounds(self) -> tuple[float, float]:
        return math.log(self.beta / (1 - self.alpha)), math.log((1 - self.beta) / self.alpha)

    def llr(self, penta: Sequence[float]) -> float:
        """The log-likelihood ratio of H1 over H0 after pentanomial counts ``penta`` (LL .. WW)."""
        counts = [c + EPSILON for c in penta]
        total = sum(counts)
        freq = [c / total for c in counts]
        p0 = constrained_mle(freq, expected_score(self.elo0))
        p1 = constrained_mle(freq, expected_score(self.elo1))
        return total * sum(f * math.log(b / a) for f, a, b in zip(freq, p0, p1, strict=True))

    def decide(self, penta: Sequence[float]) -> Decision:
        lower, upper = self.bounds
        llr = self.llr(penta)
        decision = "H1" if llr >= upper else "H0" if llr <= lower else "none"
        pairs = int(sum(penta))
        mean, sd = _mean_and_sd(penta)
        return Decision(
            decision,
            llr,
            lower,
            upper,
            pairs,
            elo_of(mean),
            elo_of(mean - 1.96 * sd),
            elo_of(mean + 1.96 * sd),
        )


def _mean_and_sd(penta: Sequence[float]) -> tuple[float, float]:
    """The mean pair score and its standard error (a pair is one observation)."""
    n = sum(penta)
    if n == 0:
        return 0.5, 0.5
    mean = sum(c * s for c, s in zip(penta, SCORES, strict=True)) / n
    var = sum(c * (s - mean) ** 2 for c, s in zip(penta, SCORES, strict=True)) / n
    return mean, math.sqrt(var / n) if n > 1 else 0.5
