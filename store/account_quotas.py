"""What one account's hosted bots may hold, all of them together: source kept, and versions building at once.

A hosted bot's own :class:`~store.versions.Quota` bounds what each bot submits; an account may own many
bots (``TABLANETTE_BOTS_PER_ACCOUNT``), so the account as a whole has bounds of its own, checked in the same
optimistic transaction that keeps a new version (:meth:`store.versions.Versions.submit` watches every one
of the account's bots' versions, so two uploads at once, to one bot or to two, cannot both take the last
free place):

- **source kept** (``TABLANETTE_HOSTED_SOURCE_BYTES_PER_ACCOUNT``): the bytes of source archives the
  arena's store keeps for every version of the account's bots (what an upload costs the store's RAM: the
  archive as the arena packs it). The sources of versions whose build or preflight failed are given up
  first when room is needed (nothing builds or runs them again); a version that built keeps its source,
  since a host may have to build it again (a takeover, a new host). Over the bound: 413, nothing kept.
- **versions building at once** (``TABLANETTE_HOSTED_VERSIONS_BUILDING_PER_ACCOUNT``): the account's
  versions submitted, building or in preflight. One more is refused (429, ``Retry-After``) until one of
  them is ready or has failed, so one account cannot fill the hosts' build and preflight slots. Nothing
  is counted but the versions' own states: a build that ends, however it ends, frees its place.

The third bound, hosted bots in service at once (``TABLANETTE_HOSTED_VERSIONS_ACTIVE_PER_ACCOUNT``), is
kept where versions go into service, :mod:`scheduler.admission`.

Every refusal is a :class:`QuotaError` with its HTTP status and a one-line message that says the figure,
the bound, the setting, and what to do.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from config import ArenaSettings

BUSY = ("submitted", "building", "preflight")
"""States in which a version holds a place in the hosts' build or preflight work."""
FAILED = ("build-failed", "preflight-failed")
"""States a version never leaves: nothing builds or runs it again, so its source may go."""
BUILDING_RETRY_S = 60
"""The ``Retry-After`` of a refusal for versions building at once: about a quick build and preflight."""


class QuotaError(ValueError):
    """A submission over its bot's or its account's quota, refused before anything was kept.

    ``status`` is the HTTP status that says so (429: too many versions this hour, or building at once,
    with ``retry_after`` seconds; 413: too many bytes of source kept).
    """

    def __init__(self, message: str, status: int, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status, self.retry_after = status, retry_after


@dataclass(frozen=True)
class AccountQuota:
    """What all the hosted bots of one account may hold together (see the module's doc)."""

    source_bytes: int
    building: int
    active: int

    @classmethod
    def of(cls, settings: ArenaSettings) -> AccountQuota:
        return cls(
            settings.hosted_source_bytes_per_account,
            settings.hosted_versions_building_per_account,
            settings.hosted_versions_active_per_account,
        )


@dataclass
class Usage:
    """What an account's hosted bots hold now."""

    account: str
    kept: int = 0
    """Bytes of source archives kept, every version of every hosted bot of the account."""
    busy: list[str] = field(default_factory=list)
    """Its versions submitted, building or in preflight (names ``bot@n``)."""
    spare: list[tuple[str, int]] = field(default_factory=list)
    """Its failed versions that still keep a source, and its size: what may go to make room."""

    def add(self, name: str, state: str, size: int) -> None:
        self.kept += size
        if state in BUSY:
            self.busy.append(name)
        elif state in FAILED and size:
            self.spare.append((name, size))


def check(usage: Usage, size: int, quota: AccountQuota) -> list[str]:
    """Check one more version, its archive ``size`` bytes, against the account's ``quota``: :class:`QuotaError`
    if over it; else the versions whose sources must go to make room (failed ones only)."""
    if len(usage.busy) >= quota.building:
        raise QuotaError(
            f"account {usage.account} has {len(usage.busy)} versions building or in preflight "
            f"({_listed(usage.busy)}), the most an account may have at once "
            f"(TABLANETTE_HOSTED_VERSIONS_BUILDING_PER_ACCOUNT={quota.building}): submit again once one of them "
            "is ready or has failed",
            429,
            BUILDING_RETRY_S,
        )
    if usage.kept + size <= quota.source_bytes:
        return []
    freed = sum(n for _, n in usage.spare)
    if usage.kept - freed + size > quota.source_bytes:
        raise QuotaError(
            f"account {usage.account} keeps {mb(usage.kept - freed)} of hosted source; this archive's {mb(size)} "
            f"would pass the most an account may keep, {mb(quota.source_bytes)} "
            "(TABLANETTE_HOSTED_SOURCE_BYTES_PER_ACCOUNT): make the folder smaller (leave out data the bot does "
            "not need) or ask the arena's operator for room",
            413,
        )
    return [name for name, _ in usage.spare]


def mb(size: int) -> str:
    return f"{size / (1 << 20):.1f} MB"


def _listed(names: Sequence[str], most: int = 5) -> str:
    shown = ", ".join(names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")
