"""The stock as a deal leaves it: sample the cards still to come, exactly as likely as the shuffle makes them.

Before round ``r`` of a deal is dealt, everybody has seen the first hands, the
table and the hands of rounds ``1..r-1``; the rest of the stock is hidden. Its
order is *not* uniform under ``initial_table_jacks = replace``: a Jack drawn for
the table goes to the bottom of the stock, so the last cards dealt are more
often Jacks. :class:`StockSampler` draws the hidden stock from its exact
conditional distribution given what has been dealt:

- ``s``, the number of Jacks that went to the bottom, has the prior of a shuffled
  deck (the Jacks met before the table's last non-Jack: negative
  hypergeometric), times the chance of the hands dealt since, given ``s``
  (they hold none of the bottom Jacks and are a uniform draw of the rest);
- the bottom Jacks are a uniform choice of the Jacks not yet seen, in random
  order, under a uniform shuffle of the other hidden cards.

Under ``keep`` (or with no table) ``s`` is always 0 and the hidden stock is a
uniform shuffle.

>>> from engine_service.rules.rules import Rules
>>> from engine_service.rules.shuffle import deal_layout
>>> import random
>>> rules = Rules.preset("tablic")
>>> sampler = StockSampler(rules, deal_layout(rules, "demo", 0), 1)
>>> len(sampler.sample(random.Random(1))), round(sum(sampler.weights), 6)
(36, 1.0)
"""

from __future__ import annotations

import random
from math import comb, perm

from .cards import FULL_DECK, JACK, iter_mask
from .errors import LuckError
from .rules import Rules
from .shuffle import DealLayout

_JACKS = sum(1 << (JACK * 4 + s) for s in range(4))


class StockSampler:
    """The hidden stock before round ``round`` of a deal dealt as ``layout`` (rounds before it seen)."""

    def __init__(self, rules: Rules, layout: DealLayout, round: int) -> None:
        if not 1 <= round < len(layout.rounds):
            raise LuckError(f"round {round}: only rounds 1..{len(layout.rounds) - 1} are dealt from the stock")
        first = 0
        for hand in layout.rounds[0]:
            first |= hand
        rest = FULL_DECK & ~first & ~layout.table  # the stock once the table was dealt
        seen = 0
        for hands in layout.rounds[1:round]:
            for hand in hands:
                seen |= hand
        hidden = rest & ~seen
        self.hidden = list(iter_mask(hidden))
        self.hidden_jacks = list(iter_mask(hidden & _JACKS))
        replace = rules.initial_table_jacks == "replace" and rules.table_size > 0
        if replace and layout.table & _JACKS:
            raise LuckError(
                "a Jack stayed on the table under initial_table_jacks=replace (too few other cards): "
                "the stock left by such a deal is not sampled"
            )
        self.weights = _bottom_jack_weights(rules, rest, seen, hidden) if replace else [1.0]

    def sample(self, rng: random.Random) -> list[int]:
        """The hidden stock in dealing order (top first): a uniform shuffle, then the bottom Jacks."""
        s = rng.choices(range(len(self.weights)), self.weights)[0] if len(self.weights) > 1 else 0
        bottom = rng.sample(self.hidden_jacks, s)
        gone = set(bottom)
        top = [c for c in self.hidden if c not in gone]
        rng.shuffle(top)
        return top + bottom


def _bottom_jack_weights(rules: Rules, rest: int, seen: int, hidden: int) -> list[float]:
    """P(s Jacks went to the bottom | the hands dealt since the table), s = 0, 1, ..."""
    t = rules.table_size
    n_rest, dealt = rest.bit_count(), seen.bit_count()
    j_rest, j_hidden = (rest & _JACKS).bit_count(), (hidden & _JACKS).bit_count()
    others = n_rest + t - j_rest  # the non-Jacks among the stock and the table, before the table was drawn
    weights = []
    for s in range(j_hidden + 1):
        if n_rest - s < dealt:
            weights.append(0.0)
            continue
        prior = comb(s + t - 1, s) * comb(j_rest - s + others - t, j_rest - s) / comb(j_rest + others, j_rest)
        weights.append(prior * comb(j_hidden, s) / comb(j_rest, s) / perm(n_rest - s, dealt))
    total = sum(weights)
    return [w / total for w in weights]
