"""The web app: pages (static HTML + JS, no asset from the internet) and the JSON API.

``tablanette web`` serves it with uvicorn. Routes are thin: every answer comes
from :mod:`web.queries` or :mod:`web.replay`. The API is
described at ``/api`` (human) and ``/api/openapi.json`` (machine).

A hosted version's latest output, its faults' output and its build log are its
program's own words: served to its owner (``Authorization: Bearer KEY``), and
to everyone only if the owner chose so (``POST /api/bots/NAME/output-visibility``).
Every text from a bot or a build is served printable (:mod:`store.printable`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import redis
from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, Field
from redis.asyncio import Redis as AsyncRedis
from starlette.concurrency import run_in_threadpool

from config import ArenaSettings, load_settings
from hosting.manifest import ManifestError
from hosting.source import MAX_PACKED, SourceError
from hosting.submit import from_archive
from scheduler.ladder import LOS_TOP
from store import live, printable
from store.accounts import Accounts
from store.audit import AuditLog
from store.client import async_twin
from store.embargo import HeldBack
from store.leagues import LeagueError
from store.rate_limits import AttemptLimits, Limited
from store.versions import Quota, QuotaError, VersionError
from web import front_door, queries, seasons
from web.callers import acting, caller
from web.live import LiveHub, sse, stream
from web.queries import Reads
from web.replay import luck_curve, replay_frames

STATIC = Path(__file__).parent / "static"

pages = APIRouter(include_in_schema=False)
api = APIRouter(prefix="/api")


def _reads(request: Request) -> Reads:
    reads: Reads = request.app.state.reads
    return reads


ReadsDep = Annotated[Reads, Depends(_reads)]


def create_app(
    client: redis.Redis, prefix: str, settings: ArenaSettings | None = None, live_redis: AsyncRedis | None = None
) -> FastAPI:
    """The app over the arena under ``prefix``; ``settings`` give the hosted bots' quotas (default:
    the environment's, as every process reads them); ``live_redis``: the same Redis on an asyncio client,
    for the live streams (default: one made from ``client``'s connection settings)."""
    app = FastAPI(
        title="Tablanette Arena API",
        version="1",
        docs_url=None,
        redoc_url=None,
        openapi_url="/api/openapi.json",
        description="JSON behind every page of the ladder, read-only but for accounts (tag `accounts`: sign "
        "up, log in, personal API keys, an account's own bots) and a bot's owner's calls: submitting a new "
        "version, asking for a quarantine's lift, showing its output to everyone or not. An owner is an "
        "account (its personal API key as `Authorization: Bearer tbk_...`, or its session cookie with the "
        "`X-CSRF-Token` header on every change) or the holder of a hosted bot's owner key (`Bearer tbo_...`). "
        "A hosted version's latest output, faults' output and build log are served to its owner, and to everyone "
        'only if the owner chose so. Errors answer `{"detail": "..."}` with status 401 (not logged in, not the '
        "owner), 403 (a change without its CSRF token or from another site; sign-up closed), 404 (unknown league, "
        "bot or match), 409 (a name taken; not in quarantine; or a game held back because it shares its deal "
        "with a game not yet over: `held` says why and until when), 413 (too large, or more source than a bot "
        "may keep), 422 (bad parameter or submission) or 429 (too many attempts or versions; `Retry-After` says "
        "when).",
    )
    app.state.reads = Reads.open(client, prefix)
    app.state.live = LiveHub(live_redis or async_twin(client))
    app.state.settings = settings or load_settings()
    app.state.quota = Quota.of(app.state.settings)
    app.state.accounts = Accounts(client, prefix)
    app.state.limits = AttemptLimits(client, prefix)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.include_router(pages)
    app.include_router(api)
    app.include_router(front_door.router)
    front_door.account_errors(app)

    async def not_found(request: Request, exc: Exception) -> JSONResponse:
        return JSONResponse({"detail": str(exc)}, status_code=404)

    for unknown in (LeagueError, VersionError):  # an unknown league, bot, match or version
        app.add_exception_handler(unknown, not_found)

    @app.exception_handler(HeldBack)
    async def held_back(request: Request, exc: HeldBack) -> JSONResponse:
        return JSONResponse({"detail": str(exc), "held": exc.hold.to_json()}, status_code=409)

    @app.exception_handler(QuotaError)
    async def over_quota(request: Request, exc: QuotaError) -> JSONResponse:
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else None
        return JSONResponse({"detail": str(exc)}, status_code=exc.status, headers=headers)

    @app.exception_handler(redis.RedisError)
    async def store_unreachable(request: Request, exc: redis.RedisError) -> JSONResponse:
        return JSONResponse({"detail": f"the arena's store (Redis) is unreachable: {exc}"}, status_code=503)

    return app


# ---------------------------------------------------------------- pages


def _page(name: str) -> FileResponse:
    return FileResponse(STATIC / name, media_type="text/html")


@pages.get("/")
def index_page() -> FileResponse:
    return _page("index.html")


@pages.get("/leagues/{league_id}")
def league_page(league_id: str) -> FileResponse:
    return _page("league.html")


@pages.get("/leagues/{league_id}/seasons/{number}")
def season_page(league_id: str, number: int) -> FileResponse:
    return _page("season.html")


@pages.get("/leagues/{league_id}/bots/{bot}")
def bot_page(league_id: str, bot: str) -> FileResponse:
    return _page("bot.html")


@pages.get("/leagues/{league_id}/live/{match_id:path}")
def live_page(league_id: str, match_id: str) -> FileResponse:
    return _page("live.html")


@pages.get("/leagues/{league_id}/replay/{match_id:path}")
def replay_page(league_id: str, match_id: str) -> FileResponse:
    return _page("replay.html")


@pages.get("/bots/{bot}")
def profile_page(bot: str) -> FileResponse:
    return _page("profile.html")


@pages.get("/bots/{bot}/versions/{number}")
def version_page(bot: str, number: int) -> FileResponse:
    return _page("version.html")


@pages.get("/api")
def api_page() -> FileResponse:
    return _page("api.html")


@pages.get("/signup")
def signup_page() -> FileResponse:
    return _page("signup.html")


@pages.get("/login")
def login_page() -> FileResponse:
    return _page("login.html")


@pages.get("/account")
def account_page() -> FileResponse:
    return _page("account.html")


# ---------------------------------------------------------------- JSON API
# Each route hands its data straight to JSONResponse (no generic re-encoding).


@api.get("/leagues", tags=["leagues"], summary="Every league with its progress")
def api_leagues(
    reads: ReadsDep,
    preflights: Annotated[
        bool,
        Query(description="Also the preflight leagues that check a hosted version before it plays rated games."),
    ] = False,
) -> JSONResponse:
    return JSONResponse(queries.leagues(reads, preflights))


@api.get("/leagues/{league_id}", tags=["leagues"], summary="A league: rules, format, bots, live progress")
def api_league(reads: ReadsDep, league_id: str) -> JSONResponse:
    return JSONResponse(queries.league_summary(reads, league_id))


@api.get(
    "/leagues/{league_id}/ladder",
    tags=["ladder"],
    summary="The fitted ladder, best first, a page at a time (limit, offset; total is every bot): rating, "
    "95% interval, provisional mark, margin, settled groups, form; games and W/D/L as stored, rated_games as "
    "fitted (a standing ladder's fit may trail the last results by a few seconds)",
)
def api_ladder(
    reads: ReadsDep, league_id: str, limit: int = Query(100, ge=1, le=1000), offset: int = Query(0, ge=0)
) -> JSONResponse:
    return JSONResponse(queries.ladder(reads, league_id, limit, offset))


@api.get(
    "/leagues/{league_id}/seasons",
    tags=["ladder"],
    summary="A standing ladder's seasons (`tablanette league season`), first first: number, label, when, results, "
    "bots, leader, whether a new season started there; 404 for a league that is not a standing ladder",
)
def api_seasons(reads: ReadsDep, league_id: str) -> JSONResponse:
    return JSONResponse(seasons.seasons(reads, league_id))


@api.get(
    "/leagues/{league_id}/seasons/{number}",
    tags=["ladder"],
    summary="One season of a standing ladder with the ladder it kept (rank, bot, rating, 95% interval, games, "
    "W/D/L, form), never changed afterwards; 404 if there is no such season",
)
def api_season(reads: ReadsDep, league_id: str, number: int) -> JSONResponse:
    return JSONResponse(seasons.season(reads, league_id, number))


@api.get(
    "/leagues/{league_id}/los",
    tags=["ladder"],
    summary="Likelihood of superiority of each of the top bots over each other (row over column), ladder order",
)
def api_los(reads: ReadsDep, league_id: str, limit: int = Query(30, ge=2, le=LOS_TOP)) -> JSONResponse:
    return JSONResponse(queries.los(reads, league_id, limit))


@api.get(
    "/leagues/{league_id}/crosstable",
    tags=["leagues"],
    summary="Head-to-head scores (1 a win, 0.5 a draw) among the top bots",
)
def api_crosstable(reads: ReadsDep, league_id: str, limit: int = Query(30, ge=2, le=200)) -> JSONResponse:
    return JSONResponse(queries.crosstable(reads, league_id, limit))


@api.get(
    "/leagues/{league_id}/matches", tags=["matches"], summary="Finished matches, newest first, and the failed ones"
)
def api_matches(
    reads: ReadsDep, league_id: str, limit: int = Query(20, ge=1, le=500), offset: int = Query(0, ge=0)
) -> JSONResponse:
    return JSONResponse(queries.recent_matches(reads, league_id, limit, offset))


@api.get(
    "/leagues/{league_id}/bots/{bot}",
    tags=["ladder"],
    summary="One bot: rating, record, form history, recent matches, timeouts, illegal plays, forfeits; in a "
    "standing ladder also its fitted rating and interval over time (`fitted_history`)",
)
def api_bot(reads: ReadsDep, league_id: str, bot: str, limit: int = Query(20, ge=1, le=200)) -> JSONResponse:
    return JSONResponse(queries.bot_page(reads, league_id, bot, limit))


@api.get(
    "/leagues/{league_id}/replays/{match_id:path}",
    tags=["matches"],
    summary="Replay frames of a finished match, computed by the rules engine, its luck and skill per team, and "
    "`seats`: each seat's bot as the league names it (the record's `players` say what played: name@version)",
)
def api_replay(reads: ReadsDep, league_id: str, match_id: str) -> JSONResponse:
    record = queries.record(reads, league_id, match_id)  # HeldBack (409) while its deal is being played
    header = {k: v for k, v in record.items() if k != "deals"}
    seats = reads.results.match_rows(league_id, [match_id])[0]["seats"]
    return JSONResponse({"record": header, "seats": seats, "frames": replay_frames(record), "luck": luck_curve(record)})


@api.get(
    "/leagues/{league_id}/live/{match_id:path}",
    tags=["matches"],
    summary="A running match's public events as Server-Sent Events (id <attempt>-<n>, event: its kind, data: "
    "its JSON) until it is over; resume with Last-Event-ID (or ?after=). No card of a hand is shown before the "
    "deal it belongs to is over; a finished match answers one `finished` event naming its replay",
    response_class=StreamingResponse,
)
async def api_live(
    request: Request, reads: ReadsDep, league_id: str, match_id: str, after: str | None = None
) -> StreamingResponse:
    raw = request.headers.get("last-event-id") or after
    try:
        resume = live.parse_event_id(raw) if raw else None
    except ValueError as exc:
        raise HTTPException(400, f"Last-Event-ID: {exc}") from None
    keys = reads.leagues.keys(league_id)
    hub: LiveHub = request.app.state.live
    status = await live.match_status_async(hub.r, keys, match_id)  # on the event loop: no thread per spectator
    if status is None:
        raise LeagueError(f"no match {match_id!r} in league {league_id!r}")
    await run_in_threadpool(reads.embargo.check, league_id, match_id, True)  # a deal's twin not yet over
    headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    if status in ("done", "failed"):  # what is left of its stream (kept a while), or its replay
        kept = await live.read_after_async(hub.r, keys, match_id, resume)
        if not kept:
            replay = f"/leagues/{league_id}/replay/{match_id}"
            kept = [("0-0", {"kind": "finished", "status": status, "replay": replay})]
        body = iter(["".join(sse(entry_id, event) for entry_id, event in kept)])
        return StreamingResponse(body, media_type="text/event-stream", headers=headers)
    return StreamingResponse(stream(hub, keys, match_id, resume), media_type="text/event-stream", headers=headers)


@api.get(
    "/leagues/{league_id}/matches/{match_id:path}",
    tags=["matches"],
    summary="One match: state, seats, result, Elo changes and its tablanette-record/1 record",
)
def api_match(reads: ReadsDep, league_id: str, match_id: str) -> JSONResponse:
    return JSONResponse(queries.match_detail(reads, league_id, match_id))


@api.get("/bots", tags=["hosted bots"], summary="Every hosted bot and its versions' states")
def api_hosted_bots(reads: ReadsDep) -> JSONResponse:
    return JSONResponse(queries.hosted_bots(reads))


@api.get(
    "/bots/{bot}",
    tags=["ladder", "hosted bots"],
    summary="Any bot, connected or hosted, across its leagues (as itself or as its versions bot@N): its fitted "
    "rating, 95% interval and conduct in each, totals over rated leagues, its form after each match per league "
    "(`history`), its `limit` latest matches over all leagues, and a hosted bot's versions newest first",
)
def api_bot_profile(reads: ReadsDep, bot: str, limit: int = Query(20, ge=1, le=200)) -> JSONResponse:
    return JSONResponse(queries.bot_profile(reads, bot, limit))


@api.get(
    "/bots/{bot}/versions/{number}",
    tags=["hosted bots"],
    summary="One version: preflight report, faults with the sandbox's reasons, and its leagues with any "
    "quarantine; its latest output, faults' output and build log only to its owner (Bearer owner key) "
    "unless the owner shows them to everyone (`output_shown` says whether this answer holds them)",
)
def api_hosted_version(reads: ReadsDep, bot: str, number: int, request: Request) -> JSONResponse:
    return JSONResponse(queries.hosted_version(reads, bot, number, owner=_is_owner(reads, bot, request)))


class OutputVisibility(BaseModel):
    public: bool = Field(description="true: everyone sees the bot's output and build logs; false: its owner only")


@api.post(
    "/bots/{bot}/output-visibility",
    tags=["hosted bots"],
    summary="The owner (Bearer owner key) shows every version's latest output, faults' output and build log "
    "to everyone, or to its owner only (the default)",
)
def api_output_visibility(reads: ReadsDep, bot: str, body: OutputVisibility, request: Request) -> JSONResponse:
    _check_owner(reads, bot, request)
    reads.versions.set_output_public(bot, body.public)
    return JSONResponse({"bot": bot, "output_public": reads.versions.output_public(bot)})


@api.post(
    "/bots/{bot}/versions",
    tags=["hosted bots"],
    status_code=201,
    summary="Submit a new version: the body is a .tar.gz or .zip of the bot's folder (bot.toml at its top), "
    "with the bot's owner key as `Authorization: Bearer KEY`, or by the account that owns it (a new name: "
    "the account's first upload creates the bot); answers the new version",
)
async def api_submit_version(reads: ReadsDep, bot: str, request: Request) -> JSONResponse:
    quota: Quota = request.app.state.quota
    fresh, spent = await run_in_threadpool(_submitter, reads, bot, request, quota)
    try:
        await run_in_threadpool(reads.versions.check_rate, bot, quota)  # spam is refused before its upload is read
        upload = bytearray()
        async for chunk in request.stream():
            upload.extend(chunk)
            if len(upload) > MAX_PACKED:
                raise HTTPException(413, f"the archive is larger than {MAX_PACKED >> 20} MB")
        try:
            version, size = await run_in_threadpool(from_archive, reads.versions, bot, bytes(upload), quota)
        except (ManifestError, SourceError) as exc:
            raise HTTPException(422, str(exc)) from None
    except QuotaError:  # refused: nothing of it stays, not the name it claimed nor the account's hour
        await run_in_threadpool(front_door.give_back, request, bot, fresh, spent)
        raise
    if fresh and (who := caller(request)) is not None:
        AuditLog(reads.leagues.r, reads.leagues.prefix).record(
            "bot_created", account=who.account.name, bot=bot, bot_kind="hosted"
        )
    return JSONResponse({**version.to_json(), "size": size}, status_code=201)


def _submitter(reads: Reads, bot: str, request: Request, quota: Quota) -> tuple[bool, str | None]:
    """The owner of ``bot``; or, for a name nobody has yet, an account, which it becomes the owner of. Whether
    the name was claimed now, and the account whose hourly quota this submission spent (if any)."""
    who = caller(request)
    fresh = who is not None and not reads.versions.of(bot) and front_door.owns(request, bot) is None
    if fresh and who is not None:
        acting(request)
        front_door.account_room(request, who.account.key, quota)  # before the name is claimed
        front_door.claim(request, who, bot)  # 422 for a name no bot can have, 409 if it is anyone's
    _check_owner(reads, bot, request)
    if not fresh and (owner := request.app.state.accounts.owner_of(bot)) is not None:
        front_door.account_room(request, owner, quota)  # before the account's hour is spent
    if who is not None and front_door.owns(request, bot) is not None:  # an account's quota, over all its bots
        per_hour = request.app.state.settings.versions_per_hour_per_account
        limits: AttemptLimits = request.app.state.limits
        try:
            limits.spend("account-versions", who.account.key, per_hour, 3600, "versions from this account this hour")
        except Limited:
            front_door.give_back(request, bot, fresh, None)
            raise
        return fresh, who.account.key
    return fresh, None


def _is_owner(reads: Reads, bot: str, request: Request) -> bool:
    """Whether the request comes from ``bot``'s owner: its owner key (``Authorization: Bearer KEY``: never in
    a URL), or the account that owns it (:mod:`web.callers`)."""
    key = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
    if key.startswith("tbo_") and reads.versions.is_owner(bot, key):
        return True
    return front_door.owns(request, bot) is not None


def _check_owner(reads: Reads, bot: str, request: Request) -> None:
    """401 unless the request is ``bot``'s owner's; an account's session must also carry its CSRF token."""
    if not _is_owner(reads, bot, request):
        raise HTTPException(
            401,
            f"not {bot}'s owner: send its owner key or your account's API key as `Authorization: Bearer KEY`, "
            "or log in",
        )
    if front_door.owns(request, bot) is not None:
        acting(request)  # by a session: its CSRF token, from this site


class LiftRequest(BaseModel):
    league: str = Field(description="The league the version is in quarantine in")
    message: str = Field(min_length=1, max_length=2000, description="What the owner changed or why, for the operator")


@api.post(
    "/bots/{bot}/versions/{number}/lift-request",
    tags=["hosted bots"],
    status_code=201,
    summary="The owner (Bearer owner key) asks the operator to lift a quarantine of this version: shown on its "
    "page and in `tablanette league status`; 409 if it is not in quarantine in that league",
)
def api_lift_request(reads: ReadsDep, bot: str, number: int, body: LiftRequest, request: Request) -> JSONResponse:
    _check_owner(reads, bot, request)
    name = f"{bot}@{number}"
    reads.versions.require(name)
    if not reads.leagues.exists(body.league):
        raise HTTPException(404, f"no league named {body.league!r}")
    message = printable.line(body.message, 2000).strip()  # the operator reads it in a terminal too
    if not message:
        raise HTTPException(422, "the message is empty once its control characters are removed")
    made = reads.leagues.request_lift(body.league, name, message)
    if made is None:
        raise HTTPException(409, f"{name} is not in quarantine in league {body.league}")
    AuditLog(reads.leagues.r, reads.leagues.prefix).record(
        "lift_requested", league=body.league, bot=name, reason=message[:200]
    )
    return JSONResponse({"league": body.league, "bot": name, **made}, status_code=201)


@api.get("/health", tags=["service"], summary="Liveness: answers ok when Redis answers")
def api_health(reads: ReadsDep) -> dict[str, str]:
    try:
        reads.results.ping()
    except redis.RedisError as exc:
        raise HTTPException(503, f"redis: {exc}") from None
    return {"status": "ok"}
