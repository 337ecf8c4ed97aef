"""Every page of the web ladder in Chromium, checked against the Redis data a real tournament left.

The league is played by real bots through the engine service and two Celery
workers (see conftest.py); the pages are read the way a visitor sees them.
"""

from __future__ import annotations

import json
import re
import signal
import time
import urllib.error
from collections import defaultdict
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

import httpx
import pytest
from web_kit import DESKTOP, FAST_BOTS, LEAGUE, PHONE, SLOW_BOTS, Site, Tab, open_tab

from cli.local import CLI
from engine_service.rules import Match, Play, Rules
from engine_service.rules.cards import card_names
from store.codec import text
from store.keys import LeagueKeys
from store.leagues import LeagueStore
from store.results import LeagueResults

pytestmark = pytest.mark.slow


# ------------------------------------------------------------------ data helpers


def keys(site: Site, league: str = LEAGUE) -> LeagueKeys:
    return LeagueKeys(site.arena.prefix, league)


def finished_ids(site: Site) -> list[str]:
    return [text(m) for m in site.arena.redis.lrange(keys(site).finished_order, 0, -1)]


def record(site: Site, match_id: str, league: str = LEAGUE) -> dict[str, Any]:
    """The match's record as the store gives it to every reader (decoded from its compact form)."""
    rec = LeagueResults(site.arena.redis, site.arena.prefix).record(league, match_id)
    assert rec is not None, match_id
    return dict(rec)


def match_hash(site: Site, match_id: str) -> dict[str, Any]:
    raw = {text(k): text(v) for k, v in site.arena.redis.hgetall(keys(site).match(match_id)).items()}
    return {"seats": json.loads(raw["seats"]), "result": json.loads(raw["result"]), "elo": json.loads(raw["elo"])}


def card_label(code: str) -> str:
    """How a card reads on the page: rank ("10" for T) then the suit symbol."""
    return ("10" if code[0] == "T" else code[0]) + {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}[code[1]]


def replay_with_tabla(site: Site) -> tuple[str, list[dict[str, Any]]]:
    """A finished match whose replay has a tabla and a non-tabla capture (the viewer must show both)."""
    for mid in finished_ids(site):
        frames = site.api(f"/leagues/{LEAGUE}/replays/{mid}")["frames"]
        plays = [f for f in frames if f["kind"] == "play"]
        if any(f["tabla"] for f in plays) and any(f["captured"] and not f["tabla"] for f in plays):
            return mid, frames
    raise AssertionError("no replay with a tabla in the league")


SNAPSHOT_JS = """() => {
  const q = (s) => document.querySelector(s);
  const cards = (s) => [...document.querySelectorAll(s + ' .card')].map((c) => c.dataset.card);
  const text = (t) => { const n = q(`[data-testid="${t}"]`); return n ? n.textContent.trim() : null; };
  const hands = [...document.querySelectorAll('[data-testid^="hand-"][data-seat]')].map((h) => ({
    seat: Number(h.dataset.seat), toMove: h.dataset.toMove === 'true',
    cards: [...h.querySelectorAll('.card')].map((c) => c.dataset.card),
    label: h.querySelector('.name').textContent }));
  return {
    frame: Number(document.body.dataset.frame),
    counter: text('frame-counter'),
    table: cards('[data-testid="table"]'),
    hands,
    played: q('[data-testid="played-card"]') ? q('[data-testid="played-card"]').dataset.card : null,
    playedHighlighted: !!q('[data-testid="played-card"].played'),
    captured: [...document.querySelectorAll('[data-testid="captured"] .card.captured')].map((c) => c.dataset.card),
    tabla: !!q('[data-testid="tabla-mark"]'),
    bonus: text('bonus'),
    totals: [0, 1, 2, 3].map((t) => text(`total-${t}`)).filter((x) => x !== null),
    dealScores: [0, 1, 2, 3].map((t) => text(`deal-score-${t}`)).filter((x) => x !== null),
    result: text('result'),
  };
}"""


def snapshot(tab: Tab) -> dict[str, Any]:
    snap: dict[str, Any] = tab.page.evaluate(SNAPSHOT_JS)
    return snap


# ------------------------------------------------------------------ the finished league


def test_index_lists_the_league_with_its_progress(tab: Tab, site: Site) -> None:
    page = tab.open("/")
    row = page.locator('[data-testid="league-row"][data-league="ladder"]')
    assert row.count() == 1
    total = len(finished_ids(site))
    assert row.get_by_test_id("status").inner_text() == "finished"
    assert row.get_by_test_id("league-progress").inner_text().strip() == f"{total} / {total}"
    row.get_by_role("link", name=LEAGUE).click()
    page.wait_for_url(f"**/leagues/{LEAGUE}")
    page.wait_for_selector("body[data-ready]")
    assert tab.text("progress-done") == str(total)
    facts = page.locator("#facts").inner_text()
    assert "clock wall; round trip credited up to 0.30 s; time bank 5.0 s a match" in facts, facts
    # connected bots, no --seed: every game its own secret deal, said so (docs/fair-play.md)
    assert tab.text("deals-mode") == "Deals: independent, secret"
    assert page.locator('[data-testid="deals-public"]').count() == 0


def fitted(site: Site) -> dict[str, Any]:
    """The league's fitted ladder, as the scheduler computes it."""
    from scheduler.ladder import ladder

    results = LeagueResults(site.arena.redis, site.arena.prefix)
    return ladder(results, LeagueStore(site.arena.redis, site.arena.prefix).load(LEAGUE))


def as_shown(x: float, digits: int = 0) -> str:
    """``x`` as the page shows it: its shortest decimal form rounded half away from zero, as
    JavaScript's toLocaleString does (Python's format rounds the binary value half to even: a rating
    of 1436.5 reads 1436 here and 1437 there, an Elo change of -11.95 reads -11.9 here, -12.0 there)."""
    return str(Decimal(repr(x)).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def test_ladder_rows_match_redis_and_sort_by_column(tab: Tab, site: Site) -> None:
    counts = {r.bot: r for r in LeagueResults(site.arena.redis, site.arena.prefix).standings(LEAGUE)}
    fit = fitted(site)["rows"]
    rows = [counts[r["bot"]] for r in fit]  # ladder order: the fitted rating's
    page = tab.open(f"/leagues/{LEAGUE}")

    def shown() -> list[dict[str, str]]:
        out: list[dict[str, str]] = page.eval_on_selector_all(
            '[data-testid="ladder-row"]',
            "rows => rows.map(r => ({"
            "...Object.fromEntries([...r.cells].map(c => [c.dataset.col, c.textContent.trim()])),"
            " bot: r.dataset.bot}))",
        )
        return out

    got = shown()
    assert [r["bot"] for r in got] == [r.bot for r in rows]
    for rank, (cells, row, f) in enumerate(zip(got, rows, fit, strict=True), 1):
        assert cells["rank"] == str(rank)
        assert cells["rating"] == as_shown(f["rating"])
        assert cells["interval"].endswith(
            f" {as_shown(f['interval'][0])}–{as_shown(f['interval'][1])}"
        )  # after the bar
        assert cells["form"].endswith(
            f" {as_shown(row.rating)}"
        )  # the incremental Elo, shown as form after its sparkline
        assert cells["games"] == str(row.games) == "4"  # 3 bots, 2 games per pairing
        assert (cells["wins"], cells["draws"], cells["losses"]) == (str(row.wins), str(row.draws), str(row.losses))
        assert float(cells["points_per_game"]) == pytest.approx(row.points_per_game, abs=0.051)  # shown to 0.1
        assert cells["conduct"] == "clean"
    sparks = page.locator('[data-testid="ladder-row"] [data-testid="sparkline"]')
    assert [sparks.nth(i).get_attribute("data-points") for i in range(len(rows))] == ["4"] * len(rows)
    link = page.locator('[data-testid="ladder-row"]').first.get_by_role("link")
    assert link.get_attribute("href") == f"/leagues/{LEAGUE}/bots/{rows[0].bot}"

    page.get_by_test_id("sort-bot").click()
    assert [r["bot"] for r in shown()] == sorted(r.bot for r in rows)
    assert page.locator('th[data-col="bot"]').get_attribute("aria-sort") == "ascending"
    page.get_by_test_id("sort-bot").click()
    assert [r["bot"] for r in shown()] == sorted((r.bot for r in rows), reverse=True)
    assert page.locator('th[data-col="bot"]').get_attribute("aria-sort") == "descending"

    page.get_by_test_id("sort-losses").click()  # numbers sort high first; ties keep ladder order
    assert [r["bot"] for r in shown()] == [r.bot for r in sorted(rows, key=lambda r: -r.losses)]
    page.get_by_test_id("sort-rating").click()
    page.get_by_test_id("sort-rating").click()  # second click: lowest rating first
    assert [r["bot"] for r in shown()] == [r["bot"] for r in sorted(fit, key=lambda r: r["rating"])]
    page.get_by_test_id("sort-rank").click()
    assert [r["bot"] for r in shown()] == [r.bot for r in rows]
    tab.screenshot("league-sorted-desktop")


def test_ladder_shows_intervals_and_which_bots_are_not_settled(tab: Tab, site: Site) -> None:
    data = fitted(site)
    page = tab.open(f"/leagues/{LEAGUE}")
    for r in data["rows"]:
        row = page.locator(f'[data-testid="ladder-row"][data-bot="{r["bot"]}"]')
        bar = row.get_by_test_id("error-bar")
        low, high, rating = (float(bar.get_attribute(a) or "nan") for a in ("data-low", "data-high", "data-rating"))
        assert (low, high, rating) == (r["interval"][0], r["interval"][1], r["rating"])
        assert bar.locator("line.range").count() == 1 and bar.locator("circle.pt").count() == 1
        assert row.get_by_test_id("provisional").count() == int(r["provisional"])
    groups = data["groups"]
    for g, members in enumerate(groups):
        for bot in members:
            row = page.locator(f'[data-testid="ladder-row"][data-bot="{bot}"]')
            assert row.get_attribute("data-group") == str(g)
            assert ("unsettled" in (row.get_attribute("class") or "")) == (len(members) > 1)
    legend = page.locator("#ladder-legend").inner_text()
    if any(len(g) > 1 for g in groups):
        assert "not settled yet" in legend
    else:
        assert "Every bot is above the next" in legend
    los = page.get_by_test_id("los")
    order = [r["bot"] for r in data["rows"]]
    assert los.locator('[data-testid="los-row"]').evaluate_all("rs => rs.map(r => r.dataset.bot)") == order
    api = json.loads(page.evaluate(f"fetch('/api/leagues/{LEAGUE}/los').then(r => r.text())"))
    for i, a in enumerate(order):
        for j, b in enumerate(order):
            if i != j:
                cell = los.locator(f'[data-testid="los-cell"][data-row="{a}"][data-col="{b}"]')
                assert float(cell.get_attribute("data-los") or "nan") == api["los"][i][j]
    tab.screenshot("ladder-intervals-desktop")


def test_tournament_progress_shows_every_match_done(tab: Tab, site: Site) -> None:
    status = LeagueStore(site.arena.redis, site.arena.prefix).status(LEAGUE)
    assert status.status == "finished" and status.done == status.total == 6
    tab.open(f"/leagues/{LEAGUE}")
    progress = tab.testid("progress")
    assert progress.get_attribute("data-status") == "finished"
    assert tab.text("progress-done") == tab.text("progress-total") == str(status.total)
    assert tab.text("progress-text") == f"{status.total} / {status.total} matches done"
    assert (tab.text("progress-running"), tab.text("progress-queued"), tab.text("progress-failed")) == ("0", "0", "0")
    assert tab.text("progress-eta") == "done"


def test_crosstable_cells_are_the_head_to_head_results(tab: Tab, site: Site) -> None:
    # Head-to-head recomputed from each finished match's seats and result (1 a win, 0.5 a draw).
    score: dict[tuple[str, str], float] = defaultdict(float)
    games: dict[tuple[str, str], int] = defaultdict(int)
    for mid in finished_ids(site):
        m = match_hash(site, mid)
        a, b = m["seats"]
        winner = m["result"]["winner"]
        score[a, b] += 0.5 if winner is None else float(winner == 0)
        score[b, a] += 0.5 if winner is None else float(winner == 1)
        games[a, b] += 1
        games[b, a] += 1
    page = tab.open(f"/leagues/{LEAGUE}")
    bots = [r["bot"] for r in fitted(site)["rows"]]
    table = tab.testid("crosstable")
    assert table.locator('[data-testid="crosstable-row"]').evaluate_all("rs => rs.map(r => r.dataset.bot)") == bots
    for a in bots:
        diag = table.locator(f'[data-testid="crosstable-diag"][data-row="{a}"]')
        assert diag.get_attribute("data-col") == a and diag.inner_text().strip() == ""
        for b in bots:
            if a == b:
                continue
            cell = table.locator(f'[data-testid="crosstable-cell"][data-row="{a}"][data-col="{b}"]')
            assert float(cell.get_attribute("data-score")) == score[a, b], (a, b)
            assert int(cell.get_attribute("data-games")) == games[a, b] == 2, (a, b)
            s = score[a, b]
            shown = str(int(s)) if s == int(s) else f"{int(s) or ''}½"
            assert cell.inner_text().replace(" ", "") == f"{shown}/{games[a, b]}"
    assert page.locator('[data-testid="crosstable-diag"]').count() == len(bots)


def test_recent_matches_link_to_their_replays(tab: Tab, site: Site) -> None:
    ids = finished_ids(site)
    page = tab.open(f"/leagues/{LEAGUE}")
    rows = page.locator('[data-testid="match-row"]')
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.match)") == list(reversed(ids))  # newest first
    for i, mid in enumerate(reversed(ids)):
        rec = record(site, mid)
        row = rows.nth(i)
        assert row.get_by_test_id("match-score").inner_text() == " – ".join(map(str, rec["score"]))
        assert row.get_by_test_id("replay-link").get_attribute("href") == f"/leagues/{LEAGUE}/replay/{mid}"
    assert page.locator('[data-testid="failed-row"]').count() == 0
    rows.first.get_by_test_id("replay-link").click()
    page.wait_for_selector("body[data-ready]")
    assert tab.text("frame-counter") == "Deal 1 · dealt"


def test_bot_page_shows_history_conduct_and_results_from_its_seat(tab: Tab, site: Site) -> None:
    best = fitted(site)["rows"][0]
    top = LeagueResults(site.arena.redis, site.arena.prefix).standing(LEAGUE, best["bot"])
    assert top is not None
    page = tab.open(f"/leagues/{LEAGUE}/bots/{top.bot}")
    assert page.locator("h1").inner_text() == top.bot
    assert tab.text("rating") == as_shown(best["rating"])
    assert tab.text("form") == as_shown(top.rating, 1)
    assert tab.text("interval").startswith(f"{as_shown(best['interval'][0])} – {as_shown(best['interval'][1])}")
    assert tab.text("games") == str(top.games)
    assert tab.text("wdl") == f"{top.wins} / {top.draws} / {top.losses}"
    for tid, value in (("timeouts", top.timeouts), ("illegal", top.illegal), ("forfeits", top.forfeits)):
        assert tab.text(tid) == str(value) == "0"
        assert page.get_by_test_id(tid).is_visible()
    history = site.arena.redis.llen(keys(site).bot_matches(top.bot))
    chart = tab.testid("rating-chart")
    assert int(chart.get_attribute("data-points")) == history + 1  # plus the initial rating
    assert chart.locator("circle.pt").count() == history + 1

    mine = [text(m).split("\t")[0] for m in reversed(site.arena.redis.lrange(keys(site).bot_matches(top.bot), 0, -1))]
    rows = page.locator('[data-testid="bot-match-row"]')
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.match)") == mine
    letters = []
    for i, mid in enumerate(mine):
        rec, m = record(site, mid), match_hash(site, mid)
        seat = m["seats"].index(top.bot)
        team = next(t for t, seats in enumerate(rec["teams"]) if seat in seats)
        winner = rec["result"]["winner"]
        letter = "D" if winner is None else "W" if winner == team else "L"
        letters.append(letter)
        row = rows.nth(i)
        assert row.get_attribute("data-result") == letter
        assert row.get_by_test_id("result").inner_text() == letter
        others = [str(s) for t, s in enumerate(rec["score"]) if t != team]
        assert row.get_by_test_id("score").inner_text() == " – ".join([str(rec["score"][team]), *others])
        elo = float(m["elo"][seat])
        assert row.get_by_test_id("elo").inner_text() == ("+" if elo > 0 else "−") + as_shown(abs(elo), 1)
        opponent = m["seats"][1 - seat]
        assert row.get_by_role("link", name=opponent).get_attribute("href") == f"/leagues/{LEAGUE}/bots/{opponent}"
    assert letters.count("W") == top.wins and letters.count("L") == top.losses


def test_replay_steps_through_a_match_by_keyboard_and_buttons(tab: Tab, site: Site) -> None:
    mid, frames = replay_with_tabla(site)
    rec = record(site, mid)
    names = [p.split("@")[0] for p in rec["players"]]
    n = len(names)
    page = tab.open(f"/leagues/{LEAGUE}/replay/{mid}")
    assert page.locator("h1").inner_text() == " vs ".join(names)
    tab.mark_document()

    totals = [0] * len(rec["teams"])
    deal_plays = {k: len(d["plays"]) for k, d in enumerate(rec["deals"])}
    ends_seen = 0
    for i, frame in enumerate(frames):
        if i:
            page.keyboard.press("ArrowRight")
        snap = snapshot(tab)
        assert snap["frame"] == i
        assert [h["label"] for h in snap["hands"]] == names
        if frame["kind"] == "result":
            break
        assert snap["table"] == frame["table"], i
        assert [h["cards"] for h in snap["hands"]] == frame["hands"], i
        k = frame["deal"]
        if frame["kind"] == "deal":
            assert snap["counter"] == f"Deal {k + 1} · dealt"
            to_move = [h["seat"] for h in snap["hands"] if h["toMove"]]
            assert to_move == [(frame["dealer"] + 1) % n]
        elif frame["kind"] == "play":
            play = rec["deals"][k]["plays"][frame["play"]]
            assert snap["counter"] == f"Deal {k + 1} · play {frame['play'] + 1} of {deal_plays[k]}"
            assert snap["played"] == play["card"] and snap["playedHighlighted"]
            assert snap["captured"] == play["captured"]
            assert snap["tabla"] == frame["tabla"]
            if frame["bonus"]:
                assert snap["bonus"].startswith(f"+{frame['bonus']} point")
            assert snap["totals"] == [str(t) for t in totals]
        elif frame["kind"] == "end":
            deal_score = rec["deals"][k]["score"]
            totals = [t + s for t, s in zip(totals, deal_score, strict=True)]
            assert snap["counter"] == f"Deal {k + 1} · deal over"
            assert snap["dealScores"] == [str(s) for s in deal_score], f"deal {k + 1}"
            assert snap["totals"] == [str(t) for t in totals], f"deal {k + 1}"
            if not ends_seen:
                tab.screenshot("replay-deal-end-desktop")
            ends_seen += 1
    assert ends_seen == len(rec["deals"])
    assert totals == rec["score"]
    assert snap["frame"] == len(frames) - 1
    assert snap["counter"] == "Match over"
    assert snap["totals"] == [str(s) for s in rec["score"]]
    winner = rec["result"]["winner"]
    assert winner is not None
    others = [str(s) for t, s in enumerate(rec["score"]) if t != winner]
    assert snap["result"].startswith(f"{names[winner]} wins {rec['score'][winner]} – {' – '.join(others)}")
    assert tab.testid("next").is_disabled() and tab.testid("last").is_disabled()
    tab.screenshot("replay-result-desktop")

    starts = [i for i, f in enumerate(frames) if f["kind"] == "deal"]
    tab.testid("first").click()
    assert snapshot(tab)["frame"] == 0 and tab.testid("prev").is_disabled()
    tab.testid("next-deal").click()
    assert snapshot(tab)["frame"] == starts[1] and tab.text("frame-counter") == "Deal 2 · dealt"
    tab.testid("prev").click()  # back onto the end of deal 1
    snap = snapshot(tab)
    assert snap["frame"] == starts[1] - 1 and snap["dealScores"] == [str(s) for s in rec["deals"][0]["score"]]
    tab.testid("next").click()
    tab.testid("next").click()
    assert snapshot(tab)["frame"] == starts[1] + 1
    tab.testid("prev-deal").click()  # to the start of the current deal, then the one before
    assert snapshot(tab)["frame"] == starts[1]
    tab.testid("prev-deal").click()
    assert snapshot(tab)["frame"] == starts[0]
    tab.testid("last").click()
    assert snapshot(tab)["counter"] == "Match over"
    page.keyboard.press("Home")
    assert snapshot(tab)["frame"] == 0
    page.keyboard.press("PageDown")
    assert snapshot(tab)["frame"] == starts[1]
    page.keyboard.press("PageUp")
    assert snapshot(tab)["frame"] == starts[0]
    page.keyboard.press("End")
    assert snapshot(tab)["frame"] == len(frames) - 1
    page.keyboard.press("ArrowLeft")
    assert snapshot(tab)["frame"] == len(frames) - 2
    assert tab.same_document()  # stepping never reloads the page


def test_replay_highlights_captures_and_marks_a_tabla(tab: Tab, site: Site) -> None:
    mid, frames = replay_with_tabla(site)
    tabla = next(i for i, f in enumerate(frames) if f["kind"] == "play" and f["tabla"])
    capture = next(i for i, f in enumerate(frames) if f["kind"] == "play" and f["captured"] and not f["tabla"])
    trail = next(i for i, f in enumerate(frames) if f["kind"] == "play" and not f["captured"])

    page = tab.open(f"/leagues/{LEAGUE}/replay/{mid}#frame={capture}")
    snap = snapshot(tab)
    assert snap["frame"] == capture
    assert snap["captured"] == frames[capture]["captured"] and snap["captured"]
    assert snap["played"] == frames[capture]["card"]
    assert not snap["tabla"] and tab.testid("tabla-mark").count() == 0
    shown = tab.testid("captured").locator(".card")
    assert shown.evaluate_all("cs => cs.map(c => c.innerText.replace(/\\s+/g, '').replace('\\ufe0e', ''))") == [
        card_label(c) for c in frames[capture]["captured"]
    ]
    colours = shown.evaluate_all("cs => cs.map(c => getComputedStyle(c).color)")
    for code, colour in zip(frames[capture]["captured"], colours, strict=True):
        red = colour == "rgb(196, 18, 48)"
        assert red == (code[1] in "HD"), (code, colour)
    tab.screenshot("replay-capture-desktop")

    page.goto(site.url(f"/leagues/{LEAGUE}/replay/{mid}#frame={tabla}"))
    page.wait_for_selector("body[data-ready]")
    snap = snapshot(tab)
    assert snap["frame"] == tabla and snap["tabla"]
    assert tab.testid("tabla-mark").is_visible() and tab.text("tabla-mark") == "TABLA"
    assert snap["table"] == [] and snap["captured"] == frames[tabla]["captured"]
    assert tab.text("bonus") == f"+{frames[tabla]['bonus']} point" + ("s" if frames[tabla]["bonus"] > 1 else "")
    tab.screenshot("replay-tabla-desktop")

    page.keyboard.press("Home")
    for _ in range(trail):
        tab.testid("next").click()
    snap = snapshot(tab)
    assert snap["frame"] == trail and snap["captured"] == [] and not snap["tabla"]
    assert frames[trail]["card"] in snap["table"]  # a trailed card lands on the table

    tab.testid("speed").select_option("100")
    tab.testid("play-pause").click()
    assert tab.testid("play-pause").get_attribute("aria-pressed") == "true"
    page.wait_for_function(f"Number(document.body.dataset.frame) >= {trail + 3}")
    tab.testid("play-pause").click()
    assert tab.testid("play-pause").get_attribute("aria-pressed") == "false"
    stopped = snapshot(tab)["frame"]
    page.wait_for_timeout(400)
    assert snapshot(tab)["frame"] == stopped


def test_api_page_describes_every_endpoint(tab: Tab, site: Site) -> None:
    spec = site.api("/openapi.json")
    page = tab.open("/api")
    shown = page.locator('[data-testid="endpoint"]').evaluate_all(
        "es => es.map(e => [e.dataset.path, e.dataset.method])"
    )
    assert sorted(map(tuple, shown)) == sorted(
        (path, method.upper()) for path, ops in spec["paths"].items() for method in ops
    )
    for path, ops in spec["paths"].items():
        for method, op in ops.items():  # every GET, and the one POST (an owner submitting a version)
            box = page.locator(f'[data-testid="endpoint"][data-path="{path}"][data-method="{method.upper()}"]')
            assert op["summary"] in box.inner_text()
            assert box.locator('[data-testid="param"]').count() == len(op.get("parameters", []))
    assert f"curl -s {site.base}/api/leagues" in tab.text("examples")


def test_unknown_league_shows_the_error(tab: Tab) -> None:
    tab.open("/leagues/no-such-league")
    assert "no league named 'no-such-league'" in tab.text("error")


PAGES = {
    "index": "/",
    "league": f"/leagues/{LEAGUE}",
    "bot": f"/leagues/{LEAGUE}/bots/ada-strong",
    "profile": "/bots/ada-strong",
    "replay": f"/leagues/{LEAGUE}/replay/REPLAY",
    "api": "/api",
}


@pytest.mark.parametrize("viewport", ["desktop", "phone"])
@pytest.mark.parametrize("name", list(PAGES))
def test_page_renders_locally_and_fits_the_screen(browser: Any, site: Site, name: str, viewport: str) -> None:
    """Each page: no request leaves 127.0.0.1, no error, no page-wide horizontal scroll at 375 px; a screenshot."""
    path = PAGES[name]
    if name == "replay":
        mid, frames = replay_with_tabla(site)
        tabla = next(i for i, f in enumerate(frames) if f["kind"] == "play" and f["tabla"])
        path = path.replace("REPLAY", mid) + f"#frame={tabla}"
    with open_tab(browser, site, DESKTOP if viewport == "desktop" else PHONE) as tab:
        page = tab.open(path)
        assert tab.testid("error").count() == 0
        assert not tab.console_errors, tab.console_errors
        width = page.evaluate("document.documentElement.scrollWidth")
        limit = (DESKTOP if viewport == "desktop" else PHONE)["width"] + 1
        assert width <= limit, f"{name} is {width} px wide at {viewport} size"
        if viewport == "phone" and name == "replay":
            # the replay stacks: controls, then the table, then the score
            tops = [page.get_by_test_id(t).bounding_box()["y"] for t in ("frame-counter", "table", "score")]
            assert tops == sorted(tops)
        tab.screenshot(f"{name}-{viewport}")


# ------------------------------------------------------------------ a league in progress


def test_progress_updates_live_without_reloading(tab: Tab, site: Site) -> None:
    league = "live"
    site.cli("league", "create", league, "--games", "6", "--rule", "deals=2")
    site.cli("league", "add-bot", league, *SLOW_BOTS)
    feeder = site.arena.spawn("feeder-live", [*CLI, "league", "start", league, "--window", "2"])
    try:
        store = LeagueStore(site.arena.redis, site.arena.prefix)
        deadline = time.monotonic() + 30
        while store.status(league).status != "running":
            assert time.monotonic() < deadline, feeder.text()
            time.sleep(0.05)

        page = tab.open(f"/leagues/{league}")
        first = int(tab.text("progress-done"))
        total = int(tab.text("progress-total"))
        assert total == 6 and first < total
        assert tab.testid("progress").get_attribute("data-status") == "running"
        assert tab.text("progress-eta") != "done"
        tab.mark_document()

        page.wait_for_function(
            f"Number(document.querySelector('[data-testid=progress-done]').textContent) > {first}", timeout=30_000
        )
        tab.screenshot("league-live-desktop")
        page.wait_for_selector('[data-testid="progress"][data-status="finished"]', timeout=60_000)
        assert tab.text("progress-done") == tab.text("progress-total") == "6"
        assert tab.same_document()
        assert page.locator('[data-testid="ladder-row"]').count() == len(SLOW_BOTS)  # refreshed as results came
        assert page.locator('[data-testid="match-row"]').count() == 6

        summary_url = f"{site.base}/api/leagues/{league}"
        polls = tab.requests.count(summary_url)
        page.wait_for_timeout(2600)
        assert tab.requests.count(summary_url) == polls, "still polling a finished league"
        feeder.popen.wait(30)
        assert feeder.popen.returncode == 0, feeder.text()
    finally:
        feeder.stop(signal.SIGTERM)


def test_a_big_ladder_comes_a_page_at_a_time(tab: Tab, site: Site) -> None:
    """130 bots (real records through the real ledger commit): the ladder page shows 100 and fetches the rest
    on request, ranks running on across pages; the how-sure matrix keeps to the top 30."""
    from bench.web import generate

    league, names, _ = generate(site.arena.redis, site.arena.prefix, 130, 400)
    first = site.api(f"/leagues/{league}/ladder")
    rest = site.api(f"/leagues/{league}/ladder?offset=100")
    assert (first["total"], len(first["rows"]), len(rest["rows"])) == (130, 100, 30)
    rows = first["rows"] + rest["rows"]
    assert [r["rank"] for r in rows] == list(range(1, 131))
    assert sorted(r["bot"] for r in rows) == sorted(names)
    assert rows == site.api(f"/leagues/{league}/ladder?limit=1000")["rows"]  # the pages are the ladder, cut
    los = site.api(f"/leagues/{league}/los")
    assert (len(los["bots"]), los["total"]) == (30, 130) and los["bots"] == [r["bot"] for r in rows[:30]]
    assert all(len(line) == 30 for line in los["los"])

    page = tab.open(f"/leagues/{league}")
    assert page.locator('[data-testid="ladder-row"]').count() == 100
    assert tab.text("ladder-shown") == "The top 100 of 130 bots."
    page.get_by_test_id("ladder-more").click()
    page.wait_for_function("document.querySelectorAll('[data-testid=ladder-row]').length === 130")
    assert page.get_by_test_id("ladder-more").is_hidden()
    shown = page.locator('[data-testid="ladder-row"]').evaluate_all("rs => rs.map(r => r.dataset.bot)")
    assert shown == [r["bot"] for r in rows]
    assert page.locator('[data-testid="los-row"]').count() == 30


# ------------------------------------------------------------------ luck and skill


def page_number(s: str) -> float:
    """A signed number as the pages write it (+1.5, −2.0, ±0.0)."""
    return float(s.replace("\u2212", "-").replace("±", "").replace("+", ""))


def test_bot_page_shows_luck_and_skill_per_match_and_in_total(tab: Tab, site: Site) -> None:
    """The worker stored each match's luck (the estimator's, to 0.01); the page splits every margin."""
    from engine_service.rules import luck_of_record

    best = fitted(site)["rows"][0]["bot"]
    leagues = LeagueStore(site.arena.redis, site.arena.prefix)
    seeds = leagues.deal_seeds(leagues.load(LEAGUE))  # the league's secret: its luck is sampled with it
    top = LeagueResults(site.arena.redis, site.arena.prefix).standing(LEAGUE, best)
    assert top is not None and top.luck_games == top.games > 0  # no forfeit: every match has luck
    cards = top.cards()
    page = tab.open(f"/leagues/{LEAGUE}/bots/{best}")
    assert tab.text("cards-games") == f"{top.games} of {top.games}"
    for tid, key in (("cards-raw", "raw"), ("cards-luck", "luck"), ("cards-skill", "skill")):
        assert page_number(tab.text(tid)) == pytest.approx(cards[key], abs=0.051), tid
    rows = page.locator('[data-testid="bot-match-row"]')
    assert rows.count() > 0
    for i in range(rows.count()):
        row = rows.nth(i)
        mid = row.get_attribute("data-match")
        rec, seat = record(site, mid), match_hash(site, mid)["seats"].index(best)
        team = next(t for t, seats in enumerate(rec["teams"]) if seat in seats)
        luck = luck_of_record(rec, sampling_seed=seeds.sampling(rec["seed"]))  # sampled as the worker does
        assert page_number(row.get_by_test_id("luck").inner_text()) == pytest.approx(luck.luck[team], abs=0.06)
        assert page_number(row.get_by_test_id("skill").inner_text()) == pytest.approx(luck.skill[team], abs=0.06)
    tab.screenshot("bot-luck-desktop")


def test_replay_shows_the_luck_curve(tab: Tab, site: Site) -> None:
    """Luck and skill per side, and the curve: one point per deal of cards, each a link to its frame."""
    from engine_service.rules import luck_of_record

    mid = finished_ids(site)[0]
    luck = luck_of_record(record(site, mid))
    frames = site.api(f"/leagues/{LEAGUE}/replays/{mid}")["frames"]
    page = tab.open(f"/leagues/{LEAGUE}/replay/{mid}")
    for t in range(len(luck.teams)):
        for tid, values in (("raw", luck.raw), ("luck", luck.luck), ("skill", luck.skill)):
            assert page_number(tab.text(f"{tid}-{t}")) == pytest.approx(values[t], abs=0.051), (tid, t)
    curve = tab.testid("luck-curve")
    assert int(curve.get_attribute("data-points")) == len(luck.events) + 1  # plus the start at 0
    want = []
    for e in luck.events:
        kind = "deal" if e.round == 0 else "round"
        at = next(
            i
            for i, f in enumerate(frames)
            if f["kind"] == kind and f["deal"] == e.deal and f.get("round", 0) == e.round
        )
        want.append(f"#frame={at}")
    assert curve.locator("a").evaluate_all("as => as.map(a => a.getAttribute('href'))") == want
    curve.locator("a").last.locator("circle").click()
    page.wait_for_function(f"location.hash === '{want[-1]}'")
    tab.screenshot("replay-luck-desktop")


def test_a_league_fitted_on_skill_shows_its_skill_ladder(tab: Tab, site: Site) -> None:
    """``--fit skill``: the ladder is ordered by skill, with skill and luck columns (real matches, committed
    through the ledger here so the test need not wait for workers)."""
    from bots import make_bot, play_match
    from engine_service.rules import Rules, match_record
    from store.ledger import match_luck
    from store.units import mirror_unit

    league = "on-skill"
    site.cli("league", "create", league, "--fit", "skill", "--rule", "target=31")
    store = LeagueStore(site.arena.redis, site.arena.prefix)
    store.add_bots(league, ["bo-greedy", "cy-random"])
    assert store.load(league).fit == "skill"
    rules, clean = (
        Rules.preset("tablic", target=31),
        {"moves": 0, "timeouts": 0, "illegal": 0, "auto": 0, "forfeit": False},
    )
    for i in range(6):
        seats = ["bo-greedy", "cy-random"][:: 1 if i % 2 == 0 else -1]
        seed = f"skill-{i // 2}"
        players = [make_bot("greedy" if s == "bo-greedy" else "random", f"{seed}{s}") for s in seats]
        rec = match_record(play_match(rules, seed, players), seats, f"{league}/m{i}")
        unit = mirror_unit(seed, seats)
        store.ledger.commit(
            store.keys(league), f"m{i}", rec, seats, [clean, clean], 24, 1500, unit=unit, luck=match_luck(rec)
        )
    data = site.api(f"/leagues/{league}/ladder")
    assert data["fit"] == "skill" and data["without_luck"] == 0
    page = tab.open(f"/leagues/{league}")
    order = page.locator('[data-testid="ladder-row"]').evaluate_all("rs => rs.map(r => r.dataset.bot)")
    assert order == [r["bot"] for r in data["rows"]]
    first = page.locator('[data-testid="ladder-row"]').first
    assert page_number(first.get_by_test_id("skill").inner_text().split(" ")[0]) == pytest.approx(
        data["rows"][0]["skill"], abs=0.051
    )
    assert page_number(first.get_by_test_id("luck").inner_text()) == pytest.approx(data["rows"][0]["luck"], abs=0.051)
    assert "Ordered by skill" in page.locator("#ladder-legend").inner_text()
    # The luck coefficient and the variance it leaves: the ladder's, the summary's, the page's and the CLI's.
    correction = data["luck_correction"]
    assert correction == site.api(f"/leagues/{league}")["luck_correction"] and correction["units"] == 3
    shown = tab.text("luck-correction")
    assert shown.startswith("Luck correction: coefficient") and f"{correction['beta']:.2f}" in shown, shown
    assert "from 3 units" in shown and "on wins and losses" not in shown
    status = site.cli("league", "status", league)
    assert f"luck coefficient {correction['beta']:.2f} (3 units, cross-fitted)" in status, status
    tab.open(f"/leagues/{league}/bots/{order[0]}")
    assert page_number(tab.text("skill-rating")) == pytest.approx(data["rows"][0]["skill"], abs=0.051)


# ------------------------------------------------------------------ a bot's own page, across leagues


def test_a_connected_bot_has_a_page_across_its_leagues_with_its_rating_chart(tab: Tab, site: Site) -> None:
    """``/bots/NAME`` for a connected (not hosted) bot: one row a league with the fitted rating and interval
    that league's ladder shows, totals, one chart line a league, and its latest matches over all leagues."""
    second = "second-league"
    site.cli("league", "create", second, "--games", "1", "--rule", "target=31")
    site.cli("league", "add-bot", second, "ada-strong", "bo-greedy")
    site.cli("league", "start", second, "--window", "2", timeout=180)
    store = LeagueStore(site.arena.redis, site.arena.prefix)
    mine = sorted(lid for lid in store.league_ids() if "ada-strong" in store.load(lid).bots)
    assert {LEAGUE, second} <= set(mine)

    data = site.api("/bots/ada-strong")
    assert not data["hosted"] and data["versions"] == []
    assert sorted(s["league"] for s in data["leagues"]) == mine
    for s in data["leagues"]:
        row = next(r for r in site.api(f"/leagues/{s['league']}/ladder")["rows"] if r["bot"] == "ada-strong")
        assert (s["rating"], s["interval"], s["games"]) == (row["rating"], row["interval"], row["games"])
    assert data["totals"]["games"] == sum(s["games"] for s in data["leagues"] if not s["preflight"])
    assert [h["league"] for h in data["history"]] == [s["league"] for s in data["leagues"]]
    assert [h["points"] for h in data["history"]] == [s["games"] for s in data["leagues"]]  # a point a match
    assert data["recent"][0]["league"] == second  # the newest matches, whatever their league
    assert {m["league"] for m in data["recent"]} == {LEAGUE, second}

    page = tab.open("/bots/ada-strong")
    assert tab.text("bot-kind") == "connected"
    rows = page.locator('[data-testid="profile-league"]')
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.league)") == [s["league"] for s in data["leagues"]]
    shown = next(s for s in data["leagues"] if s["league"] == second)
    row = page.locator(f'[data-testid="profile-league"][data-league="{second}"]')
    assert row.get_by_test_id("profile-rating").inner_text() == as_shown(shown["rating"])
    assert row.get_by_test_id("profile-interval").inner_text() == (
        f"{as_shown(shown['interval'][0])} – {as_shown(shown['interval'][1])}"
    )
    assert tab.text("total-games") == str(data["totals"]["games"])
    chart = tab.testid("profile-chart")
    assert chart.get_attribute("data-series") == str(len(data["history"]))
    assert chart.locator('[data-testid="chart-line"]').count() == len(data["history"])
    legend = chart.locator('[data-testid="chart-legend"]').evaluate_all("ns => ns.map(n => n.textContent)")
    assert set(legend) == {h["league"] for h in data["history"]}
    newest = page.locator('[data-testid="profile-match"]').first
    assert newest.get_attribute("data-league") == second
    assert newest.get_attribute("data-result") in ("W", "D", "L")
    assert page.locator("#hosted-part").is_hidden()
    tab.screenshot("bot-profile")

    tab.open(f"/leagues/{LEAGUE}/bots/ada-strong")  # the league's bot page links to it
    tab.testid("profile-link").click()
    tab.page.wait_for_url("**/bots/ada-strong")


def test_an_unknown_bot_has_no_page(tab: Tab, site: Site) -> None:
    with pytest.raises(urllib.error.HTTPError) as err:
        site.api("/bots/nobody-at-all")
    assert err.value.code == 404
    assert "no bot named 'nobody-at-all'" in json.loads(err.value.read())["detail"]
    tab.open("/bots/nobody-at-all")
    assert "no bot named 'nobody-at-all'" in tab.text("error")


# ------------------------------------------------------------------ matches watched live


def _league_of_slow_bots(site: Site, league: str, preset: str = "tablic", players: int = 2) -> Any:
    """A league of the slow bots (and fast ones for the seats beyond two), fed in the background; returns the
    feeder once a match is running."""
    site.cli(
        "league", "create", league, "--games", "2", "--rule", "deals=2", "--preset", preset, "--players", str(players)
    )
    site.cli("league", "add-bot", league, *[*SLOW_BOTS, *FAST_BOTS][:players])
    feeder = site.arena.spawn(f"feeder-{league}", [*CLI, "league", "start", league, "--window", "1"])
    store = LeagueStore(site.arena.redis, site.arena.prefix)
    deadline = time.monotonic() + 30
    while not any(store.match(league, m).get("status") == "running" for m in store.match_ids(league)):
        assert time.monotonic() < deadline, feeder.text()
        time.sleep(0.02)
    return feeder


def _running_match(site: Site, league: str) -> str:
    store = LeagueStore(site.arena.redis, site.arena.prefix)
    return next(m for m in store.match_ids(league) if store.match(league, m).get("status") == "running")


def _sse(site: Site, path: str, last_id: str | None = None, limit: int | None = None) -> list[tuple[str, str, Any]]:
    """(id, event, data) of the stream's messages, the first ``limit`` of them or to its end."""
    headers = {"Last-Event-ID": last_id} if last_id else {}
    got: list[tuple[str, str, Any]] = []
    with httpx.stream("GET", site.url(path), headers=headers, timeout=60) as res:
        assert res.status_code == 200 and res.headers["content-type"].startswith("text/event-stream")
        fields: dict[str, str] = {}
        for line in res.iter_lines():
            if line == "":
                if "data" in fields:
                    got.append((fields.get("id", ""), fields.get("event", "message"), json.loads(fields["data"])))
                    if limit is not None and len(got) >= limit:
                        return got
                fields = {}
            elif not line.startswith(":"):
                name, _, value = line.partition(": ")
                fields[name] = value
    return got


def _hidden(match: Any) -> set[str]:
    cards = 0
    for hand in match.deal.hands:
        cards |= hand
    for later in match.deal.layout.rounds[match.deal.round + 1 :]:
        for hand in later:
            cards |= hand
    return set(card_names(cards))


@pytest.mark.parametrize(
    ("preset", "players"),
    [("tablic", 2), ("tablanette-1939", 2), ("tablic-pagat", 2), ("pisti", 3), ("tablanette-ro", 4)],
)
def test_a_match_is_watched_live_and_no_hidden_card_reaches_its_spectators(
    site: Site, preset: str, players: int
) -> None:
    """A spectator reads a running match's stream, drops it, comes back with Last-Event-ID and reads on to the
    end; another asks from an old id. Every event comes once, in order; replayed against the match's record,
    no event about the deal in play names a card then in a hand or in the stock (two to four seats)."""
    league = f"watched-{preset}-{players}"
    feeder = _league_of_slow_bots(site, league, preset, players)
    try:
        mid = _running_match(site, league)
        path = f"/api/leagues/{league}/live/{mid}"
        first = _sse(site, path, limit=25)
        rest = _sse(site, path, last_id=first[-1][0])
        events = first + rest
        assert events[-1][1] == "over"
        attempt = events[0][0].split("-")[0]
        assert [e[0] for e in events] == [f"{attempt}-{n}" for n in range(1, len(events) + 1)]  # none missed or twice
        assert _sse(site, path, last_id=events[9][0]) == events[10:]  # an old id resumes after it
        kinds = [e[1] for e in events]
        assert kinds.count("deal") == kinds.count("deal-over") == kinds.count("hands") == 2

        deadline = time.monotonic() + 30
        while LeagueStore(site.arena.redis, site.arena.prefix).match(league, mid).get("status") != "done":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        rec = record(site, mid, league)
        replay = Match(Rules.from_record(rec["rules"], players=len(rec["players"])), rec["seed"])
        plays = iter([p for d in rec["deals"] for p in d["plays"]])
        leaks = []
        for entry_id, kind, data in events:
            if kind == "play":
                played = next(plays)
                assert data["card"] == played["card"] and data["seat"] == played["seat"], (entry_id, played)
                captured = " ".join(played["captured"])
                replay.play(
                    Play.parse(f"{played['card']}:{captured.replace(' ', ',')}" if captured else played["card"])
                )
            about_now = data.get("deal") == len(replay.deals) and not replay.is_over
            named = set(re.findall(r'"([2-9TJQKA][CDHS])"', json.dumps(data)))
            if about_now and named & _hidden(replay):
                leaks.append((entry_id, kind, sorted(named & _hidden(replay))))
        assert not leaks, leaks[:3]

        assert _sse(site, path, last_id=events[-3][0]) == events[-2:]  # kept a while after the end
        site.arena.redis.delete(LeagueStore(site.arena.redis, site.arena.prefix).keys(league).live(mid))
        finished = _sse(site, path)  # its stream gone: its replay
        assert [(k, d["replay"]) for _, k, d in finished] == [("finished", f"/leagues/{league}/replay/{mid}")]
        bad = httpx.get(site.url(path), headers={"Last-Event-ID": "seven"}, timeout=10)
        assert bad.status_code == 400 and "event id is <attempt>-<number>" in bad.json()["detail"]
        assert httpx.get(site.url(f"/api/leagues/{league}/live/nope"), timeout=10).status_code == 404
        feeder.popen.wait(60)
    finally:
        feeder.stop(signal.SIGTERM)


def test_the_live_page_advances_without_reloading_and_ends_on_the_replay(tab: Tab, site: Site) -> None:
    league = "onscreen"
    feeder = _league_of_slow_bots(site, league)
    try:
        mid = _running_match(site, league)
        page = tab.open(f"/leagues/{league}/live/{mid}")
        tab.mark_document()
        page.wait_for_selector('[data-testid="live-play"]', timeout=30_000)
        seen = page.locator('[data-testid="live-play"]').count()
        page.wait_for_function(f"document.querySelectorAll('[data-testid=live-play]').length > {seen}", timeout=30_000)
        assert page.locator('[data-testid="live-table"]').count() == 1
        tab.screenshot("live-desktop")
        page.wait_for_selector('[data-testid="live-replay"]', timeout=60_000)
        assert tab.same_document()
        assert "over:" in tab.text("live-state")
        league_page = tab.open(f"/leagues/{league}")
        league_page.wait_for_selector('[data-testid="match-row"]')
        feeder.popen.wait(60)
    finally:
        feeder.stop(signal.SIGTERM)
