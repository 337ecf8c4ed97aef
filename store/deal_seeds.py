"""Where a league's deals come from: a secret only the arena holds, or a public seed.

A match's cards follow from its deal seed (the shuffle is documented, so anyone
can deal from a seed). So a deal seed must not be computable by anyone who
plays or watches before the match is over:

- **secret** (every league created without ``--seed``): the league gets 32
  random bytes at creation (:class:`DealSecrets`, a key of its own in Redis,
  never served, never logged). Each deal seed is ``HMAC-SHA256(secret, place)``
  where the place names the match in the plan (``r3/p1/0``): publishing one
  match's seed (its record does) tells nothing of any other match's, and 128
  bits of it are kept, so no one searches them.
- **public** (``--seed TEXT``, and leagues created before secret deals, which
  deal from their name): ``SHA-256(TEXT/place)``, as the arena always did; the
  league says plainly that its deals are public.

The luck estimator samples the deals that could have come with a generator
seeded from the deal seed. A bot that knew those samples could steer its plays
towards positions where its real cards look lucky or unlucky against them, so a
secret league keys them too (:meth:`DealSeeds.sampling`); a public league keeps
the estimator's own seeding (the deal seed), as before.

>>> public = DealSeeds.public("spring")
>>> public.deal("r1/p1", 0), public.sampling(public.deal("r1/p1", 0)) == public.deal("r1/p1", 0)
('839ff1f58b9a291a', True)
>>> keyed = DealSeeds.keyed(bytes(32))
>>> len(keyed.deal("r1/p1", 0)), keyed.deal("r1/p1", 0) != keyed.deal("r1/p1", 1), keyed.is_public
(32, True, False)
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass, field

import redis

from .codec import text
from .keys import LeagueKeys

SECRET_BYTES = 32
"""A league's secret: 256 random bits."""
KEYED_HEX = 32
"""A secret league's deal seed: 128 bits of the HMAC, as hex."""


@dataclass(frozen=True)
class DealSeeds:
    """A league's deal seeds: keyed by its secret, or hashed from a public text (see the module's doc)."""

    key: bytes | None = field(default=None, repr=False)
    """The secret (None: the deals are public)."""
    text: str = ""
    """The public seed text (empty for a keyed league)."""

    @classmethod
    def public(cls, text: str) -> DealSeeds:
        return cls(None, text)

    @classmethod
    def keyed(cls, key: bytes) -> DealSeeds:
        if len(key) < 16:
            raise ValueError("a league's secret has at least 128 bits")
        return cls(key, "")

    @classmethod
    def of(cls, seed: str | DealSeeds) -> DealSeeds:
        """``seed`` itself, or a public text made into public seeds (what tests and local tools pass)."""
        return seed if isinstance(seed, DealSeeds) else cls.public(seed)

    @property
    def is_public(self) -> bool:
        return self.key is None

    def deal(self, *place: object) -> str:
        """The deal seed of the plan's ``place`` (its parts joined with ``/``)."""
        if self.key is None:
            joined = "/".join([self.text, *map(str, place)])
            return hashlib.sha256(joined.encode()).hexdigest()[:16]
        joined = "/".join(["deal", *map(str, place)])
        return hmac.new(self.key, joined.encode(), hashlib.sha256).hexdigest()[:KEYED_HEX]

    def sampling(self, deal_seed: str) -> str:
        """The luck estimator's sampling seed for a match dealt from ``deal_seed`` (the deal seed itself when
        the deals are public)."""
        if self.key is None:
            return deal_seed
        return hmac.new(self.key, f"luck/{deal_seed}".encode(), hashlib.sha256).hexdigest()[:KEYED_HEX]


class DealSecrets:
    """The leagues' secrets in Redis: made once at a league's creation, read by the scheduler (to plan) and the
    workers (to sample luck), and by nothing that serves or logs anything."""

    def __init__(self, client: redis.Redis) -> None:
        self.r = client

    def create(self, keys: LeagueKeys) -> None:
        """Give the league a fresh secret (a league that has one keeps it)."""
        self.r.set(keys.secret, secrets.token_hex(SECRET_BYTES), nx=True)

    def seeds(self, keys: LeagueKeys, public_text: str) -> DealSeeds:
        """The league's deal seeds: keyed when it has a secret, else public from ``public_text`` (its
        ``--seed``, or its name for a league created before secret deals)."""
        raw = self.r.get(keys.secret)
        return DealSeeds.public(public_text) if raw is None else DealSeeds.keyed(bytes.fromhex(text(raw)))
