"""Every Redis key the arena uses, spelled once (everything else asks :class:`Keys`).

All keys live under one configurable prefix, so leagues and tests can share a
server. The keys one Lua script touches together share a Redis Cluster hash
tag (the part in braces), so every script is safe on a cluster too: a league's
keys are tagged with the league (``<prefix>:league:{<id>}:...``) and the bots'
game-slot sets share one tag (``{<prefix>:slots}:<bot>``).

| key | type | what |
|---|---|---|
| ``<prefix>:bots`` | hash | bot name -> JSON metadata (created, revoked, token prefix) |
| ``<prefix>:bot-token`` | hash | bot name -> SHA-256 of its live token |
| ``<prefix>:token:<sha256>`` | string | a token's hash -> its bot's name |
| ``<prefix>:session:<bot>`` | string, TTL | the bot's live session: replica, session id, version, max games |
| ``<prefix>:internal-secret`` | string | the shared secret of the internal Dispatch calls |
| ``{<prefix>:slots}:<bot>`` | sorted set | match ids the bot is playing, scored by expiry |
| ``<prefix>:leagues`` | set | league ids |
| ``<prefix>:hosted`` | hash | hosted bot name -> its number of versions |
| ``<prefix>:hosted-owner`` | hash | hosted bot name -> SHA-256 of its owner key |
| ``<prefix>:hosted-public-output`` | hash | hosted bot name -> ``1`` if its owner shows its output to everyone |
| ``<prefix>:versions:<bot>`` | hash | version number -> JSON: hash, manifest, state, build log, reports |
| ``<prefix>:source:<bot>@<n>`` | string | a hosted version's source archive |
| ``<prefix>:host-lease:<bot>@<n>`` | string, TTL | the host that builds or runs the version now |
| ``<prefix>:audit`` | list | JSON audit events, newest first (the last 10,000) |
| ``<prefix>:account:<name>`` | string | an account (lower-case name): JSON name, argon2id hash, state |
| ``<prefix>:accounts`` | set | every account's lower-case name |
| ``<prefix>:account-bots:<name>`` | set | the bots an account owns |
| ``<prefix>:bot-account`` | hash | bot name -> the account that owns it (claimed once, for good) |
| ``<prefix>:signup-policy`` | string | who may sign up: ``open``, ``invite`` or ``closed`` (unset: closed) |
| ``<prefix>:invite:<sha256>`` | string, TTL | an unused invite code's hash -> JSON who issued it, when |
| ``<prefix>:web-session:<sha256>`` | string, TTL | a session cookie's hash -> JSON account, CSRF token |
| ``<prefix>:account-web-sessions:<name>`` | set | an account's live web sessions' hashes |
| ``<prefix>:api-key:<sha256>`` | string | a personal API key's hash -> JSON account, key id |
| ``<prefix>:account-api-keys:<name>`` | hash | key id -> JSON label, created, prefix, hash |
| ``<prefix>:limit:<kind>:<who>`` | string, TTL | attempt counters and locks (:mod:`store.rate_limits`) |
| ``<prefix>:events`` | pub/sub | notices for every replica (a revoked bot) |
| ``<prefix>:league:{<id>}`` ... | | one league (:class:`LeagueKeys`) |
| ``<prefix>:celery:*`` | | the Celery broker's own keys (queue ``<prefix>.matches``) |

>>> keys = Keys("t")
>>> keys.session("greedy"), keys.slots("greedy"), keys.league("spring").match("r1-m2")
('t:session:greedy', '{t:slots}:greedy', 't:league:{spring}:match:r1-m2')
"""

from __future__ import annotations

from dataclasses import dataclass

ARCHIVE_FIELD = "archive"
"""The league meta hash's field that names its archive folder once the archive is verified (the mark):
its records have left Redis for ``store.archive``."""


@dataclass(frozen=True)
class Keys:
    """The arena-wide keys under ``prefix``."""

    prefix: str

    def patterns(self) -> tuple[str, ...]:
        """``SCAN`` patterns that together match every key under the prefix (to clear an arena)."""
        return f"{self.prefix}:*", self.slots("*")

    @property
    def bots(self) -> str:
        """Hash: bot name -> JSON metadata."""
        return f"{self.prefix}:bots"

    @property
    def bot_token(self) -> str:
        """Hash: bot name -> SHA-256 of its live token."""
        return f"{self.prefix}:bot-token"

    def token(self, digest: str) -> str:
        """String: a token's SHA-256 -> its bot's name."""
        return f"{self.prefix}:token:{digest}"

    def session(self, bot: str) -> str:
        """String with a TTL: the bot's live session (JSON)."""
        return f"{self.prefix}:session:{bot}"

    @property
    def internal_secret(self) -> str:
        return f"{self.prefix}:internal-secret"

    def slots(self, bot: str) -> str:
        """Sorted set: match ids the bot plays now, scored by expiry (one hash tag for all bots)."""
        return f"{{{self.prefix}:slots}}:{bot}"

    @property
    def leagues(self) -> str:
        """Set of league ids."""
        return f"{self.prefix}:leagues"

    @property
    def hosted(self) -> str:
        """Hash: hosted bot name -> how many versions it has had (the last one's number)."""
        return f"{self.prefix}:hosted"

    @property
    def hosted_owner(self) -> str:
        """Hash: hosted bot name -> SHA-256 of its owner key (submits through the API and the web)."""
        return f"{self.prefix}:hosted-owner"

    @property
    def hosted_public_output(self) -> str:
        """Hash: hosted bot name -> ``1`` if its owner lets everyone see its output and build logs."""
        return f"{self.prefix}:hosted-public-output"

    def versions(self, bot: str) -> str:
        """Hash: version number -> the version's JSON (:class:`store.versions.Version`)."""
        return f"{self.prefix}:versions:{bot}"

    def source(self, version: str) -> str:
        """String: the source archive of ``version`` (``bot@n``)."""
        return f"{self.prefix}:source:{version}"

    def host_lease(self, version: str) -> str:
        """String with a TTL: the host that builds, preflights or runs ``version`` now."""
        return f"{self.prefix}:host-lease:{version}"

    @property
    def audit(self) -> str:
        """List of JSON audit events, newest first (capped)."""
        return f"{self.prefix}:audit"

    @property
    def events(self) -> str:
        """Pub/sub channel: JSON notices every engine replica acts on at once (a revoked bot)."""
        return f"{self.prefix}:events"

    # the front door: accounts, their credentials, the attempt limits

    def account(self, name: str) -> str:
        """String: the account's JSON (``name`` lower-case)."""
        return f"{self.prefix}:account:{name}"

    @property
    def accounts(self) -> str:
        """Set of every account's lower-case name."""
        return f"{self.prefix}:accounts"

    def account_bots(self, name: str) -> str:
        """Set: the bots the account owns."""
        return f"{self.prefix}:account-bots:{name}"

    @property
    def bot_account(self) -> str:
        """Hash: bot name -> the account that owns it."""
        return f"{self.prefix}:bot-account"

    @property
    def signup_policy(self) -> str:
        return f"{self.prefix}:signup-policy"

    def invite(self, digest: str) -> str:
        """String with a TTL: an unused invite code's hash -> who issued it."""
        return f"{self.prefix}:invite:{digest}"

    def web_session(self, digest: str) -> str:
        """String with a TTL: a session cookie's hash -> its account and CSRF token."""
        return f"{self.prefix}:web-session:{digest}"

    def account_web_sessions(self, name: str) -> str:
        return f"{self.prefix}:account-web-sessions:{name}"

    def api_key(self, digest: str) -> str:
        """String: a personal API key's hash -> its account and key id."""
        return f"{self.prefix}:api-key:{digest}"

    def account_api_keys(self, name: str) -> str:
        return f"{self.prefix}:account-api-keys:{name}"

    def limit(self, kind: str, who: str) -> str:
        """String with a TTL: an attempt counter or lock (:mod:`store.rate_limits`)."""
        return f"{self.prefix}:limit:{kind}:{who}"

    def league(self, league_id: str) -> LeagueKeys:
        return LeagueKeys(self.prefix, league_id)

    @property
    def celery(self) -> str:
        """The prefix of the Celery broker's keys."""
        return f"{self.prefix}:celery:"

    @property
    def queue(self) -> str:
        """The Celery queue of matches."""
        return f"{self.prefix}.matches"


@dataclass(frozen=True)
class LeagueKeys:
    """The keys of one league; all share the league's hash tag."""

    prefix: str
    league: str

    @property
    def base(self) -> str:
        return f"{self.prefix}:league:{{{self.league}}}"

    @property
    def meta(self) -> str:
        """Hash: the league's parameters, participants and status (and, once archived, :data:`ARCHIVE_FIELD`)."""
        return self.base

    @property
    def plan(self) -> str:
        """List of match ids in plan order."""
        return f"{self.base}:plan"

    @property
    def secret(self) -> str:
        """String: the league's secret, the key of its deal seeds (:mod:`store.deal_seeds`): read by the
        scheduler and the workers only, never served, never logged. A league with ``--seed`` has none."""
        return f"{self.base}:secret"

    @property
    def open_deals(self) -> str:
        """Hash: a shared deal's place in the plan -> how many of its games are not done yet. A game that
        shares its deal with others is held back from every reader until its deal's count is 0
        (:mod:`store.embargo`)."""
        return f"{self.base}:open-deals"

    @property
    def feeder(self) -> str:
        """String with a TTL: the scheduler feeding the league now (:mod:`store.feeder_claim`)."""
        return f"{self.base}:feeder"

    def match(self, match_id: str) -> str:
        """Hash: one match's seats, seed, status, attempts, result."""
        return f"{self.base}:match:{match_id}"

    def lease(self, match_id: str) -> str:
        """String with a TTL: the token of the runner that plays the match now."""
        return f"{self.base}:lease:{match_id}"

    def live(self, match_id: str) -> str:
        """Stream with a TTL: a running match's public events for spectators (:mod:`store.live`)."""
        return f"{self.base}:live:{match_id}"

    def watched(self, match_id: str) -> str:
        """String with a TTL: someone watches the match (set by the web while it has spectators of it); its
        runner publishes the match's events only once it is set (:mod:`store.live`)."""
        return f"{self.base}:watched:{match_id}"

    def state_set(self, state: str) -> str:
        """Set of the match ids in ``state`` (queued, running or failed; a done match is in
        :attr:`finished_order`, which counts them)."""
        return f"{self.base}:{state}"

    @property
    def done(self) -> str:
        """Legacy: the set of done match ids a league written before the finished list counted them
        kept (never written now: a league's done count is the length of :attr:`finished_order`)."""
        return self.state_set("done")

    @property
    def failed(self) -> str:
        return self.state_set("failed")

    @property
    def queued(self) -> str:
        return self.state_set("queued")

    @property
    def running(self) -> str:
        return self.state_set("running")

    @property
    def head_to_head(self) -> str:
        """Hash ``"a\\tb"`` -> points ``a`` scored against ``b`` (1 a win, 0.5 a draw)."""
        return f"{self.base}:h2h"

    @property
    def head_to_head_games(self) -> str:
        """Hash ``"a\\tb"`` -> games ``a`` and ``b`` played against each other."""
        return f"{self.base}:h2h-games"

    def trend(self, bot: str) -> str:
        """Legacy: the bot's last 30 ratings, as leagues written before :meth:`bot_matches` held them
        kept them (read if present, never written now)."""
        return f"{self.base}:trend:{bot}"

    def bot_matches(self, bot: str) -> str:
        """List of the matches ``bot`` played, in the order they finished, one entry each:
        ``match<TAB>rating after`` (to 0.01; when it finished is in its :meth:`match`; a league written
        before kept the bare match id here and the rest in :meth:`history` and :meth:`trend`)."""
        return f"{self.base}:bot-matches:{bot}"

    @property
    def records(self) -> str:
        """Hash: match id -> its game record (JSON)."""
        return f"{self.base}:records"

    @property
    def form(self) -> str:
        """Sorted set bot -> its form: the incremental Elo, updated as each match finishes (the ladder
        itself is fitted from :attr:`outcomes`)."""
        return f"{self.base}:form"

    @property
    def legacy_form(self) -> str:
        """Legacy: :attr:`form` as leagues written before December 2026 named it; renamed to it the
        first time a process touches the league (:mod:`store.upgrade`), never written now."""
        return f"{self.base}:ladder"

    def fitted_history(self, bot: str) -> str:
        """List: a standing ladder's fitted ratings of ``bot`` over time, oldest first, thinned to at most 200
        (:mod:`store.rating_history`)."""
        return f"{self.base}:fitted-history:{bot}"

    def stats(self, bot: str) -> str:
        """Hash: the bot's games, wins, draws, losses, points and conduct counts."""
        return f"{self.base}:stats:{bot}"

    def history(self, bot: str) -> str:
        """Legacy: a list of JSON ``{match, rating, delta, at}``, every rating change of the bot, as
        leagues written before :meth:`bot_matches` held them kept them (read if present, never written now)."""
        return f"{self.base}:history:{bot}"

    @property
    def finished_order(self) -> str:
        """List of match ids in the order they finished."""
        return f"{self.base}:finished"

    @property
    def outcomes(self) -> str:
        """List of JSON outcomes (who was in which team, placing, points, mirrored unit), one per finished
        match: what the fitted ratings are computed from."""
        return f"{self.base}:outcomes"

    @property
    def fit(self) -> str:
        """JSON: the last fitted ladder and the number of outcomes it was fitted from (a cache)."""
        return f"{self.base}:fit"

    @property
    def fit_los(self) -> str:
        """JSON: the last likelihood-of-superiority matrix and the number of outcomes behind it (a cache)."""
        return f"{self.base}:fit-los"

    @property
    def fit_stamps(self) -> str:
        """Hash: ``fit`` and ``fit-los`` -> a token written with each of those caches (in the same
        transaction): a reader that parsed one before knows from a few bytes whether it changed."""
        return f"{self.base}:fit-stamps"

    @property
    def seasons(self) -> str:
        """List of JSON summaries of a standing ladder's seasons (``league season``), season ``n`` the ``n``-th:
        label, when, how many results; only ever appended to (:mod:`store.seasons`)."""
        return f"{self.base}:seasons"

    @property
    def season_tables(self) -> str:
        """Hash: season number -> JSON, the ladder as it stood when the season was taken (written once)."""
        return f"{self.base}:season-tables"

    @property
    def season_start(self) -> str:
        """String: where the season now played starts, as a position in :attr:`outcomes` (unset: 0): a
        standing ladder is fitted on the results from there on (``league season --new``)."""
        return f"{self.base}:season-start"

    @property
    def season_base(self) -> str:
        """Hash: bot -> JSON, its :meth:`stats` counts when the season now played started (what its season's
        ladder row subtracts)."""
        return f"{self.base}:season-base"

    @property
    def quarantine(self) -> str:
        """Hash: bot -> JSON {reason, match, at}: bots taken out of scheduling until an operator lifts it."""
        return f"{self.base}:quarantine"

    @property
    def lift_requests(self) -> str:
        """Hash: bot -> JSON {message, at}: its owner asks for its quarantine to be lifted (until it is)."""
        return f"{self.base}:lift-requests"

    @property
    def absent(self) -> str:
        """Hash: bot -> unix time since when it has been seen not connected (the scheduler keeps it)."""
        return f"{self.base}:absent"
