"""Malformed messages logged in moderation (engine_service/malformed.py): the first from an address at once,
then one counted line per interval while more come; a bounded number of addresses; every one counted."""

from __future__ import annotations

import asyncio
import logging

import pytest

from engine_service import metrics
from engine_service.malformed import OTHERS, MalformedLog

METHOD = "/tablanette.v1.RulesService/ListPresets"


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "tablanette.malformed"]


def counted() -> float:
    return metrics.MALFORMED.labels(METHOD.lstrip("/"))._value.get()  # type: ignore[no-any-return]


def test_a_flood_is_one_line_then_one_counted_line_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "tablanette.malformed")
    before = counted()

    async def flood() -> None:
        log = MalformedLog(interval_s=0.2)
        for _ in range(500):
            log.note("ipv4:10.0.0.1", METHOD)
        log.note("ipv4:10.0.0.2", METHOD)
        await asyncio.sleep(0.3)  # the first interval is over
        for _ in range(7):
            log.note("ipv4:10.0.0.1", METHOD)
        await asyncio.sleep(0.2)
        assert lines(caplog)[-1] == "7 malformed messages from ipv4:10.0.0.1 in the last 0.2s"
        await asyncio.sleep(0.2)  # a quiet interval: the address is forgotten, its next message a first line
        assert log.counts == {}
        log.note("ipv4:10.0.0.1", METHOD)

    asyncio.run(flood())
    assert lines(caplog) == [
        "malformed message from ipv4:10.0.0.1 to tablanette.v1.RulesService/ListPresets "
        "(refused; more from it are counted, a line every 0.2s)",
        "malformed message from ipv4:10.0.0.2 to tablanette.v1.RulesService/ListPresets "
        "(refused; more from it are counted, a line every 0.2s)",
        "499 malformed messages from ipv4:10.0.0.1 in the last 0.2s",
        "7 malformed messages from ipv4:10.0.0.1 in the last 0.2s",
        "malformed message from ipv4:10.0.0.1 to tablanette.v1.RulesService/ListPresets "
        "(refused; more from it are counted, a line every 0.2s)",
    ]
    assert counted() - before == 500 + 1 + 7 + 1


def test_addresses_past_the_bound_are_counted_together(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "tablanette.malformed")

    async def many() -> MalformedLog:
        log = MalformedLog(interval_s=60, max_peers=3)
        for i in range(1000):
            log.note(f"ipv4:10.0.{i // 256}.{i % 256}", METHOD)
        return log

    log = asyncio.run(many())
    assert log.counts == {"ipv4:10.0.0.0": 0, "ipv4:10.0.0.1": 0, "ipv4:10.0.0.2": 0, OTHERS: 996}
    assert len(lines(caplog)) == 4
