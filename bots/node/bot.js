#!/usr/bin/env node
// Tablanette Arena example bot in Node.js.
//
// Opens ONE bidirectional gRPC stream (tablanette.v1.BotGateway/Connect),
// sends Hello, and then answers every Turn of every game it is given with a
// PlayMove chosen by a small greedy policy (see chooseIndex below).
//
//   export TABLANETTE_TOKEN=TOKEN      (safer than --token: arguments show in `ps`)
//   node bot.js --address 127.0.0.1:50051 --name my-bot
//
// --address may list several engine replicas ("host1:50051,host2:50051"):
// when a connection fails or ends, the bot tries the next one (see
// "The connection" below).
//
// The .proto files are read at run time from ../../proto (the repository's
// committed wire contract), so there is no generated code to keep in sync.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { parseArgs } = require('node:util');

const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

// The package.json next to this file: its name and version label the bot in
// its Hello, so a copied and renamed bot reports its own name and version.
const PACKAGE = require('./package.json');
const PROTO_DIR = process.env.TABLANETTE_PROTO_DIR || path.resolve(__dirname, '..', '..', 'proto');

// ---------------------------------------------------------------------------
// Protocol

// keepCase: field names exactly as in the .proto (game_id, turn_id, ...).
// longs: String: int64 fields (turn_id, deadline_unix_ms) arrive as decimal
// strings, so a turn_id is echoed back byte for byte, never rounded.
// defaults: absent repeated/map/scalar fields read as [] / {} / 0 / "".
// oneofs: a message's oneof is also exposed as a virtual field naming the
// member that is set, e.g. ServerMessage.kind === 'turn'.
const LOADER_OPTIONS = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
  includeDirs: [PROTO_DIR],
};

/** Loads tablanette/v1/*.proto and returns the `tablanette.v1` gRPC namespace. */
function loadProtos(protoDir = PROTO_DIR) {
  const files = ['tablanette/v1/game.proto', 'tablanette/v1/arena.proto'];
  for (const f of files) {
    if (!fs.existsSync(path.join(protoDir, f))) {
      throw new Error(`proto file ${f} not found under ${protoDir} (set TABLANETTE_PROTO_DIR)`);
    }
  }
  const definition = protoLoader.loadSync(files, { ...LOADER_OPTIONS, includeDirs: [protoDir] });
  return { definition, v1: grpc.loadPackageDefinition(definition).tablanette.v1 };
}

// ---------------------------------------------------------------------------
// Strategy: greedy. Everything a bot author would change lives here.

// Used when a Turn arrives for a game whose GameStarted we never saw (for
// example after a reconnect): the default preset `tablic` (docs/rules.md).
const DEFAULT_RULES = Object.freeze({
  preset: 'tablic',
  jack: 'sweep',
  card_points: Object.freeze({ TD: 3, '2C': 2, AC: 1, AD: 1, AH: 1, AS: 1 }),
});

const RANKS = 'A23456789TJQK';
const SUITS = 'CDHS';

// ---------------------------------------------------------------------------
// The packed form (docs/protocol.md#the-packed-form). The bot asks for it in
// its Hello; a turn then carries card numbers (rank * 4 + suit: 0 = AC ...
// 51 = KS) and card masks (bit n = card n) instead of names: less to encode,
// send and decode. unpackTurn() gives it back the named shape, so strategies
// see one form whichever the server sent.

const FEATURES = ['packed'];
const CARD_NAMES = Array.from({ length: 52 }, (_, n) => RANKS[n >> 2] + SUITS[n & 3]);

/** Card names of a mask (a fixed64 as longs: String gives it: a decimal string), ascending. */
function namesOf(mask) {
  const big = BigInt(mask || 0);
  if (big >> 52n) throw new Error(`card mask ${mask} has bits above the 52 cards`);
  const out = [];
  let lo = Number(big & 0xffffffffn);
  let hi = Number(big >> 32n);
  for (let n = 0; lo; n += 1, lo >>>= 1) if (lo & 1) out.push(CARD_NAMES[n]);
  for (let n = 32; hi; n += 1, hi >>>= 1) if (hi & 1) out.push(CARD_NAMES[n]);
  return out;
}

function cardName(n) {
  if (!Number.isInteger(n) || n < 0 || n > 51) throw new Error(`card number ${n} is outside 0..51`);
  return CARD_NAMES[n];
}

/**
 * A Turn in the named form: a packed turn is unpacked (observation and
 * legal_plays filled in from Turn.packed, legal_cards, legal_captured); a
 * named one is returned as it is.
 */
function unpackTurn(turn) {
  const p = turn.packed;
  if (!p) return turn;
  const captured = turn.legal_captured || [];
  if ((turn.legal_cards || []).length !== captured.length) throw new Error('legal_cards and legal_captured differ in length');
  return {
    ...turn,
    packed: null,
    legal_cards: [],
    legal_captured: [],
    observation: {
      seat: p.seat,
      team: p.team,
      turn: p.turn,
      deal_index: p.deal_index,
      dealer: p.dealer,
      round: p.round,
      rounds_left: p.rounds_left,
      hand: namesOf(p.hand),
      table: namesOf(p.table),
      piles: (p.piles || []).map((m) => ({ cards: namesOf(m) })),
      hand_counts: p.hand_counts || [],
      plays: (p.play_seats || []).map((seat, i) => ({
        seat,
        card: cardName(p.play_cards[i]),
        captured: namesOf(p.play_captured[i]),
        bonus: p.play_bonus[i] || 0,
        auto: Boolean(p.play_auto[i]),
      })),
      deal_bonus: p.deal_bonus || [],
      scores: p.scores || [],
      unseen: namesOf(p.unseen),
      stock_count: p.stock_count,
    },
    legal_plays: turn.legal_cards.map((card, i) => ({ card: cardName(card), captured: namesOf(captured[i]) })),
  };
}

/** Canonical card name: "10d" -> "TD". Servers send canonical names already. */
function canonical(card) {
  const c = String(card || '').trim().toUpperCase();
  return c.startsWith('10') ? 'T' + c.slice(2) : c;
}

/** Sort key in the protocol's card order: A lowest ... K highest, then suit C < D < H < S. */
function cardOrder(card) {
  const c = canonical(card);
  return RANKS.indexOf(c[0]) * 4 + SUITS.indexOf(c[1]);
}

function cardPoints(rules, card) {
  const table = (rules && rules.card_points) || {};
  return Number(table[canonical(card)] || 0);
}

function isJack(card) {
  return canonical(card)[0] === 'J';
}

/**
 * What a capture banks right now: the points of every card taken (the
 * captured table cards and the played card), +1 if it clears the whole table,
 * +0.1 per card taken (a nudge towards "most cards").
 */
function captureValue(rules, table, play) {
  const captured = play.captured || [];
  const taken = [play.card, ...captured];
  let value = 0;
  for (const c of taken) value += cardPoints(rules, c);
  const tableSet = new Set((table || []).map(canonical));
  const clears = tableSet.size > 0 && captured.length > 0 && captured.every((c) => tableSet.has(canonical(c))) &&
    new Set(captured.map(canonical)).size === tableSet.size;
  if (clears) value += 1;
  value += 0.1 * taken.length;
  return value;
}

/**
 * What trailing a card gives away, as a sort key (lower is better): first
 * whether it is a sweeping Jack (kept back when possible), then its points,
 * then the card order (lowest card first).
 */
function trailKey(rules, card) {
  const jackSweeps = String((rules && rules.jack) || '') === 'sweep';
  return [jackSweeps && isJack(card) ? 1 : 0, cardPoints(rules, card), cardOrder(card)];
}

function lessKey(a, b) {
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) return a[i] < b[i];
  }
  return false;
}

/**
 * The greedy policy. Returns an index into `legalPlays`, or -1 if there is none.
 *
 * @param {Array<{card: string, captured: string[]}>} legalPlays  Turn.legal_plays
 * @param {object|null} rules  GameStarted.rules (null/undefined: DEFAULT_RULES)
 * @param {string[]} table     Turn.observation.table
 * @param {Set<number>} [exclude]  indices not to choose (e.g. already rejected)
 * @param {object} [observation]   the whole Turn.observation (hand, unseen
 *   cards, piles, scores, plays so far), unused by this simple policy
 */
function chooseIndex(legalPlays, rules, table, exclude, observation) {
  const r = rules || DEFAULT_RULES;
  let bestCapture = -1;
  let bestValue = -Infinity;
  let bestTrail = -1;
  let bestTrailKey = null;
  (legalPlays || []).forEach((play, i) => {
    if (exclude && exclude.has(i)) return;
    if (play.captured && play.captured.length > 0) {
      const v = captureValue(r, table, play);
      if (v > bestValue + 1e-9) {
        bestValue = v;
        bestCapture = i;
      }
    } else {
      const k = trailKey(r, play.card);
      if (bestTrailKey === null || lessKey(k, bestTrailKey)) {
        bestTrailKey = k;
        bestTrail = i;
      }
    }
  });
  return bestCapture >= 0 ? bestCapture : bestTrail;
}

// ---------------------------------------------------------------------------
// The bot contract: what the session hands a strategy, and when.
//
// - `choose(legalPlays, rules, table, exclude, observation, clock)` returns an
//   index into legalPlays, or a Promise of one. A slow strategy should think
//   asynchronously (await a worker_threads Worker, a child process, a Rules
//   service call, or yield with `await setImmediate()` between chunks of
//   work): turns of other games are then answered meanwhile. A synchronous
//   choose holds up the whole event loop, and so every game, while it runs.
// - `clock.remainingMs()` is the time left for this turn, measured on this
//   machine's monotonic clock from Turn.time_left_ms (the network's share of
//   the way back is not taken off, unless the league credits latency: keep a
//   margin). `clock.bankMs` is the part of it that is the bot's time bank for
//   the rest of the match (Turn.time_bank_ms): plan on remainingMs() - bankMs
//   to keep the reserve. On a CLOCK_CPU turn (a
//   hosted bot in a league on the CPU clock) it is the CPU time left, counted
//   with process.cpuUsage(), as the arena counts the sandbox's CPU time.
// - Per-game state: pass `newGame` instead of `choose`. It is called once per
//   game, when the game starts (or at its first Turn if GameStarted was
//   missed, e.g. after a reconnect; `rules` is then null), with
//   {gameId, rules, seat, teams, players}, and returns that game's `choose`.
// - Calls for one game never overlap: a game's next turn waits until its
//   previous choose has settled. Calls for different games do overlap.
// - If choose throws, rejects or returns something that is not an untried
//   index, the bot answers the first untried legal play (on a first try that
//   is legal_plays[0], the engine's own timeout play) and logs why: a bug
//   costs a move, never the connection.

/** The time left for one turn, from Turn.time_left_ms: on the monotonic clock, or (cpu) this process's CPU time. */
class Clock {
  constructor(timeLeftMs, receivedAt = performance.now(), cpu = false, bankMs = 0) {
    this.budget = Math.max(Number(timeLeftMs) || 0, 0);
    this.bankMs = Math.min(Math.max(Number(bankMs) || 0, 0), this.budget);
    this.deadline = receivedAt + this.budget;
    this.cpuStart = cpu ? process.cpuUsage() : null;
  }

  /** Milliseconds left before this turn's deadline (0 once it has passed). */
  remainingMs() {
    if (this.cpuStart) {
      const used = process.cpuUsage(this.cpuStart);
      return Math.max(0, this.budget - (used.user + used.system) / 1000);
    }
    return Math.max(0, this.deadline - performance.now());
  }
}

/** The time a turn gives: Turn.time_left_ms, else (an older server) what deadline_unix_ms leaves. */
function turnTimeMs(turn) {
  const left = Number(turn.time_left_ms) || 0;
  if (left > 0) return left;
  const deadline = Number(turn.deadline_unix_ms) || 0;
  return deadline > 0 ? Math.max(0, deadline - Date.now()) : 0;
}

// ---------------------------------------------------------------------------
// Command line

const USAGE = `usage: TABLANETTE_TOKEN=TOKEN node bot.js [--address HOST:PORT[,HOST:PORT...]] [--name NAME]
                   [--max-games N] [--tls] [--ca FILE] [--version]

  --address LIST       the arena's bot gateway: one HOST:PORT, or a comma-separated list of
                       engine replicas; after a failure the bot tries the next one
                       (env TABLANETTE_ADDRESS, default 127.0.0.1:50051)
  --token TOKEN        printed once by \`tablanette bot add NAME\`. Prefer the environment
                       variable TABLANETTE_TOKEN: command-line arguments are visible to
                       other users of the machine in \`ps\`
  --name NAME          the bot name the token was issued for (env TABLANETTE_BOT_NAME, default node-greedy)
  --max-games N        games played at once (env TABLANETTE_MAX_GAMES, default 4)
  --tls                connect with TLS (system root certificates)
  --ca FILE            connect with TLS, trusting this PEM CA certificate (implies --tls)
  --version            print the version sent in Hello and exit: "<name> <version>" from
                       package.json (env TABLANETTE_BOT_VERSION replaces it)
  -h, --help           this text`;

class UsageError extends Error {}

/**
 * The replica list of --address / TABLANETTE_ADDRESS: "a:1, b:2" -> ['a:1', 'b:2'].
 * Spaces around the commas and empty entries are ignored; one address is a list of one.
 */
function parseAddresses(text) {
  return String(text || '')
    .split(',')
    .map((address) => address.trim())
    .filter((address) => address.length > 0);
}

/**
 * The label the bot sends as Hello.version (and prints for --version):
 * env TABLANETTE_BOT_VERSION if set, else "<name> <version>" from package.json.
 */
function versionLabel(env = process.env, pkg = PACKAGE) {
  return env.TABLANETTE_BOT_VERSION || `${pkg.name} ${pkg.version}`;
}

function parseOptions(argv = process.argv.slice(2), env = process.env) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      allowPositionals: false,
      options: {
        address: { type: 'string' },
        token: { type: 'string' },
        name: { type: 'string' },
        'max-games': { type: 'string' },
        tls: { type: 'boolean' },
        ca: { type: 'string' },
        version: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    throw new UsageError(err.message);
  }
  if (values.help) return { help: true };
  if (values.version) return { printVersion: true, version: versionLabel(env) };
  const addressText = values.address || env.TABLANETTE_ADDRESS || '127.0.0.1:50051';
  const opts = {
    addresses: parseAddresses(addressText),
    token: values.token || env.TABLANETTE_TOKEN || '',
    name: values.name || env.TABLANETTE_BOT_NAME || 'node-greedy',
    maxGames: Number(values['max-games'] || env.TABLANETTE_MAX_GAMES || 4),
    ca: values.ca || env.TABLANETTE_CA || '',
    tls: Boolean(values.tls || values.ca || env.TABLANETTE_TLS === '1' || env.TABLANETTE_CA),
    version: versionLabel(env),
  };
  if (opts.addresses.length === 0) {
    throw new UsageError(`--address needs at least one HOST:PORT, got ${JSON.stringify(addressText)}`);
  }
  if (!opts.token) {
    throw new UsageError('no token: set TABLANETTE_TOKEN (or pass --token) to the token `tablanette bot add NAME` printed');
  }
  if (!Number.isInteger(opts.maxGames) || opts.maxGames < 1) {
    throw new UsageError(`--max-games must be a positive integer, got ${values['max-games'] || env.TABLANETTE_MAX_GAMES}`);
  }
  return opts;
}

// ---------------------------------------------------------------------------
// The connection
//
// A bot that drops off (its engine replica died or restarted) keeps its games
// only if it is back within the arena's grace period (Welcome.grace_ms, 10 s
// by default); after that they are forfeited. So the bot
//
//  - tries the NEXT address of its --address list after every failed or ended
//    connection (round robin): a replica that is gone for good is skipped and
//    the bot lands on a live one;
//  - waits 0.25 s, 0.5 s, 1 s, 2 s, 2 s, ... between attempts (each +-20% at
//    random, so the bots of a dead replica do not all come back in the same
//    millisecond). The 2 s cap keeps several attempts inside the grace period:
//    a replica that restarts after 7 s gets its bots back about 2 s later;
//  - starts that sequence over once a server welcomes it;
//  - reconnects at once when a draining server (shutting down on purpose)
//    ends its session, since the other replicas are ready now;
//  - waits longer when the server refuses it for a while: at least 5 s when
//    another session of the same bot is live (ALREADY_EXISTS), at least 1 s
//    when told to slow down (RESOURCE_EXHAUSTED), or the server's
//    retry-after-ms hint if that is longer;
//  - exits only when no retry can help: a bad, revoked or misnamed token, a
//    refused Hello, or an address that is not a bot gateway.

const BACKOFF_START_MS = 250;
const BACKOFF_MAX_MS = 2000;
const BACKOFF_JITTER = 0.2; // +-20%
// A server that accepts the connection but never says Welcome (or a host that
// is gone and silently drops packets, so connecting neither fails nor
// succeeds): give up on it after this long and try the next address.
const WELCOME_TIMEOUT_MS = 3000;
const DEFAULT_KEEPALIVE_MS = 10000;
const STALE_GAME_MS = 60 * 60 * 1000;

// Stream end codes that reconnecting cannot fix: the bot exits with the
// message. Every other code is retried (to the next address): the server is
// shutting down or unreachable (UNAVAILABLE), the connection broke (UNKNOWN,
// INTERNAL, DEADLINE_EXCEEDED), no Welcome came in time (CANCELLED by us), the
// server closed the stream cleanly (OK), or one of the refusals below.
const FATAL_HINTS = {
  [grpc.status.UNAUTHENTICATED]: 'the token is wrong, unknown or revoked; get a new one with `tablanette bot add NAME`',
  [grpc.status.PERMISSION_DENIED]: 'the token belongs to another bot name; pass the --name it was issued for',
  [grpc.status.INVALID_ARGUMENT]: 'the server refused our Hello',
  [grpc.status.UNIMPLEMENTED]: 'this address does not serve tablanette.v1.BotGateway',
};
// Refusals that are NOT the bot's fault and pass by themselves, so the bot
// waits at least this long (or the server's retry-after-ms hint, if longer)
// before trying again, instead of knocking every 0.25 s:
//  - ALREADY_EXISTS: a bot has one session at a time, and another session of
//    this bot is live (an old copy still running, or our own previous stream
//    the server has not seen end yet). It is refused until that one ends or
//    goes quiet; exiting would leave the bot offline for good once it does.
//  - RESOURCE_EXHAUSTED: slow down (too many Hellos or streams from this
//    address or for this token, too many messages, or we did not read our
//    stream and the server's queue for us filled up).
// ABORTED (this session had gone quiet and a newer one replaced it) is
// retried with the normal back-off: if the newer session is live, the next
// attempt is refused with ALREADY_EXISTS and waits as above.
const WAIT_AT_LEAST_MS = {
  [grpc.status.ALREADY_EXISTS]: 5000,
  [grpc.status.RESOURCE_EXHAUSTED]: 1000,
};
// A retry-after-ms hint is cut to this: a garbled header must not park the
// bot for days (and setTimeout fires at once past 2^31 - 1 ms).
const MAX_RETRY_AFTER_MS = 5 * 60 * 1000;

/**
 * Reconnect delays: 0.25 s, 0.5 s, 1 s, 2 s, 2 s, ... each with random jitter
 * (+-20%). reset() starts over at 0.25 s. `random` returns a number in [0, 1)
 * (tests pass their own).
 */
class Backoff {
  constructor({ startMs = BACKOFF_START_MS, maxMs = BACKOFF_MAX_MS, jitter = BACKOFF_JITTER, random = Math.random } = {}) {
    this.startMs = startMs;
    this.maxMs = maxMs;
    this.jitter = jitter;
    this.random = random;
    this.baseMs = startMs; // the next delay before jitter
  }

  /** The delay before the next attempt, in ms; the one after it is twice as long (up to maxMs). */
  next() {
    const base = this.baseMs;
    this.baseMs = Math.min(base * 2, this.maxMs);
    const factor = 1 + this.jitter * (2 * this.random() - 1); // 0.8 .. 1.2
    return Math.round(base * factor);
  }

  reset() {
    this.baseMs = this.startMs;
  }
}

/** The index of the address to try after `index` in a list of `count`: round robin. */
function nextAddressIndex(index, count) {
  return (index + 1) % count;
}

/** True when the server ended the stream because it is shutting down (draining). */
function isDraining(status) {
  return status.code === grpc.status.UNAVAILABLE && /shutting down/i.test(status.details || '');
}

/**
 * The server's suggested wait from a stream's trailing metadata
 * (`retry-after-ms`, whole milliseconds), capped at MAX_RETRY_AFTER_MS;
 * 0 when there is none or it is not a number.
 */
function retryAfterMs(metadata) {
  if (!metadata || typeof metadata.get !== 'function') return 0;
  const values = metadata.get('retry-after-ms');
  const text = String((values && values[0]) || '').trim();
  if (!/^\d+$/.test(text)) return 0;
  return Math.min(Number(text), MAX_RETRY_AFTER_MS);
}

/**
 * What to do when a stream ends with `status` ({code, details, metadata}, as
 * grpc-js reports it). Pure, so the self-test can check every code:
 *  - {fatal: true, exitCode, hint}: exit (2 for credentials, 1 otherwise);
 *  - {fatal: false, waitAtLeastMs, draining}: reconnect to the next address
 *    after max(back-off, waitAtLeastMs); at once if draining (and welcomed).
 */
function reconnectDecision(status) {
  const code = status.code;
  if (Object.prototype.hasOwnProperty.call(FATAL_HINTS, code)) {
    const credentials = code === grpc.status.UNAUTHENTICATED || code === grpc.status.PERMISSION_DENIED;
    return { fatal: true, exitCode: credentials ? 2 : 1, hint: FATAL_HINTS[code] };
  }
  // The hint counts whatever the code: the server knows best when to come back.
  const waitAtLeastMs = Math.max(WAIT_AT_LEAST_MS[code] || 0, retryAfterMs(status.metadata));
  return { fatal: false, waitAtLeastMs, draining: isDraining(status) };
}

function log(msg) {
  process.stderr.write(`${new Date().toISOString()} ${msg}\n`);
}

function statusName(code) {
  return Object.keys(grpc.status).find((k) => grpc.status[k] === code) || String(code);
}

class ArenaBot {
  /**
   * @param {object} opts  what parseOptions returns: {addresses, token, name,
   *   maxGames, tls, ca, version}; `address: 'host:port[,host:port...]'` may
   *   stand in for `addresses`, and `version` defaults to versionLabel().
   */
  constructor(opts, { v1, logger = log, choose = chooseIndex, newGame = null, random = Math.random } = {}) {
    this.opts = opts;
    this.log = logger;
    // Each game's choose: its own from newGame (per-game state), or the shared one.
    this.newGame = newGame || (() => choose);
    this.v1 = v1 || loadProtos().v1;
    this.addresses = opts.addresses || parseAddresses(opts.address);
    if (this.addresses.length === 0) throw new Error('no address to connect to');
    this.addressIndex = 0; // the replica the next (or current) connection goes to
    this.version = opts.version || versionLabel();
    this.games = new Map(); // game_id -> {choose, rules, seat, teams, team, turn, turns, rejects, queue}
    this.call = null;
    this.generation = 0;
    this.backoff = new Backoff({ random });
    this.reconnectTimer = null;
    this.welcomeTimer = null;
    this.keepaliveTimer = null;
    this.stopping = false;
    this.stats = { games: 0, won: 0, lost: 0, drawn: 0, chooseErrors: 0 };
    this.onFatal = (code, message) => {
      this.log(`fatal: ${message}`);
      this.stop(code);
    };
    this.onExit = (code) => process.exit(code);
    this.client = this.newClient();
  }

  /** The address the next (or current) connection goes to. */
  get address() {
    return this.addresses[this.addressIndex];
  }

  // A fresh channel for every connection attempt: it resolves the address
  // again (a restarted or different replica) and dials at once, so our own
  // backoff below is the only one (grpc-js channels otherwise keep their own
  // reconnect backoff, which grows to two minutes).
  newClient() {
    return new this.v1.BotGateway(this.address, this.credentials(), {
      'grpc.primary_user_agent': `${PACKAGE.name}/${PACKAGE.version}`,
      'grpc.use_local_subchannel_pool': 1,
      'grpc.initial_reconnect_backoff_ms': BACKOFF_START_MS,
      'grpc.max_reconnect_backoff_ms': BACKOFF_MAX_MS,
    });
  }

  credentials() {
    if (!this.opts.tls) return grpc.credentials.createInsecure();
    let ca = null;
    if (this.opts.ca) {
      try {
        ca = fs.readFileSync(this.opts.ca);
      } catch (err) {
        throw new Error(`cannot read the CA certificate --ca ${this.opts.ca}: ${err.code || err.message}`);
      }
    }
    return grpc.credentials.createSsl(ca);
  }

  start() {
    this.connect();
  }

  connect() {
    this.reconnectTimer = null;
    if (this.stopping) return;
    const gen = ++this.generation;
    if (gen > 1) {
      this.client.close();
      this.client = this.newClient();
    }
    this.welcomed = false;
    const address = this.address;
    this.log(`connecting to ${address} as ${this.opts.name}${this.opts.tls ? ' (TLS)' : ''}`);
    const call = this.client.Connect();
    this.call = call;
    // No Welcome in time: cancel; the stream then ends (CANCELLED) and
    // onStreamEnd moves on to the next address.
    clearTimeout(this.welcomeTimer);
    this.welcomeTimer = setTimeout(() => {
      if (gen !== this.generation || this.welcomed) return;
      this.log(`no Welcome from ${address} within ${WELCOME_TIMEOUT_MS / 1000} s; giving up on it`);
      call.cancel();
    }, WELCOME_TIMEOUT_MS);
    call.on('data', (msg) => {
      if (gen === this.generation) this.onMessage(msg);
    });
    // grpc-js emits 'error' (non-OK status) and then 'status' (always): all
    // end-of-stream handling happens once, in onStreamEnd.
    call.on('error', () => {});
    call.on('status', (status) => {
      if (gen === this.generation) this.onStreamEnd(status);
    });
    this.send({
      hello: {
        token: this.opts.token,
        bot_name: this.opts.name,
        version: this.version,
        max_games: this.opts.maxGames,
        features: FEATURES,
      },
    });
  }

  send(message) {
    const call = this.call;
    if (!call || call.destroyed || call.writableEnded) return false;
    try {
      call.write(message);
      return true;
    } catch (err) {
      this.log(`write failed: ${err.message}`);
      return false;
    }
  }

  onMessage(msg) {
    switch (msg.kind) {
      case 'welcome':
        return this.onWelcome(msg.welcome);
      case 'game_started':
        return this.onGameStarted(msg.game_started);
      case 'turn':
        return this.onTurn(msg.turn);
      case 'play_rejected':
        return this.onPlayRejected(msg.play_rejected);
      case 'game_over':
        return this.onGameOver(msg.game_over);
      case 'keepalive':
        // A server's ping: echo it at once (the arena times the round trip, and a league that credits
        // latency does not charge it to this bot's clock). Our own timer keeps the stream alive.
        if (msg.keepalive.echo && msg.keepalive.echo !== '0') {
          this.send({ keepalive: { unix_ms: String(Date.now()), echo: msg.keepalive.echo } });
        }
        return undefined;
      default:
        this.log(`ignoring unknown server message ${JSON.stringify(msg.kind)}`);
        return undefined;
    }
  }

  onWelcome(w) {
    this.welcomed = true;
    clearTimeout(this.welcomeTimer);
    this.backoff.reset(); // a server took us: the next reconnect starts at 0.25 s again
    const keepaliveMs = w.keepalive_ms > 0 ? w.keepalive_ms : DEFAULT_KEEPALIVE_MS;
    this.log(
      `welcome from ${this.address}: bot ${w.bot_name || this.opts.name}, session ${w.session_id}, ` +
        `server ${w.server_version || '?'}, ` +
        `keepalive ${keepaliveMs} ms, grace ${w.grace_ms} ms, max_games ${this.opts.maxGames}`,
    );
    clearInterval(this.keepaliveTimer);
    // Send well within the server's interval so one slow tick never misses it.
    const every = Math.max(100, Math.floor(keepaliveMs / 2));
    this.keepaliveTimer = setInterval(() => this.send({ keepalive: { unix_ms: String(Date.now()) } }), every);
    this.keepaliveTimer.unref();
  }

  game(gameId) {
    let g = this.games.get(gameId);
    if (!g) {
      this.forgetStaleGames();
      g = { choose: null, rules: null, seat: -1, teams: [], team: -1, turn: null, turns: 0, rejects: 0 };
      g.queue = Promise.resolve(); // this game's answers, one after the other
      this.games.set(gameId, g);
    }
    g.lastSeen = Date.now();
    return g;
  }

  // A game whose GameOver never reached us (say it was forfeited while we
  // were disconnected) would otherwise stay in memory forever.
  forgetStaleGames(maxIdleMs = STALE_GAME_MS) {
    const now = Date.now();
    for (const [id, g] of this.games) {
      if (now - g.lastSeen > maxIdleMs) this.games.delete(id);
    }
  }

  onGameStarted(gs) {
    const g = this.game(gs.game_id);
    g.rules = gs.rules || null;
    g.seat = gs.seat;
    g.teams = (gs.teams || []).map((t) => t.seats || []);
    g.players = gs.players || [];
    const team = g.teams.findIndex((seats) => seats.includes(gs.seat));
    if (team >= 0) g.team = team;
    this.strategyFor(gs.game_id, g);
  }

  /** The game's choose, made by newGame the first time the game is seen. */
  strategyFor(gameId, g) {
    if (!g.choose) {
      const game = { gameId, rules: g.rules, seat: g.seat, teams: g.teams, players: g.players || [] };
      try {
        g.choose = this.newGame(game);
      } catch (err) {
        this.log(`game ${gameId}: newGame failed (${err.message}); this game plays the first legal play`);
      }
      if (typeof g.choose !== 'function') g.choose = () => 0;
    }
    return g.choose;
  }

  onTurn(packedOrNamed) {
    let turn;
    try {
      turn = unpackTurn(packedOrNamed);
    } catch (err) {
      this.log(`game ${packedOrNamed.game_id} turn ${packedOrNamed.turn_id}: unreadable turn (${err.message}); not answering`);
      return;
    }
    const g = this.game(turn.game_id);
    const obs = turn.observation || {};
    if (!g.rules && !g.warnedNoRules) {
      g.warnedNoRules = true;
      this.log(`game ${turn.game_id}: turn without GameStarted (reconnect?); playing with default ${DEFAULT_RULES.preset} rules`);
    }
    if (g.seat < 0) g.seat = obs.seat;
    if (g.team < 0 && obs.team !== undefined) g.team = obs.team;
    g.turn = {
      turn_id: turn.turn_id, // int64 as a decimal string: echoed back unchanged
      legal_plays: turn.legal_plays || [],
      table: obs.table || [],
      observation: obs,
      deadline: Number(turn.deadline_unix_ms) || 0,
      clock: new Clock(turnTimeMs(turn), performance.now(), turn.clock === 'CLOCK_CPU', turn.time_bank_ms),
      tried: new Set(),
    };
    g.turns += 1;
    this.answer(turn.game_id, g);
  }

  /**
   * Answers the game's current turn once its previous answer has settled;
   * returns the promise of this answer (the tests wait on it).
   */
  answer(gameId, g) {
    const t = g.turn;
    // think() catches the strategy's errors; this catch keeps the chain going whatever else fails
    g.queue = g.queue.then(() => this.think(gameId, g, t)).catch((err) => this.log(`game ${gameId}: ${err && err.message}`));
    return g.queue;
  }

  async think(gameId, g, t) {
    if (g.turn !== t || this.games.get(gameId) !== g) return; // a newer turn, or the game is over
    const choose = this.strategyFor(gameId, g);
    let index;
    try {
      index = await choose(t.legal_plays, g.rules, t.table, t.tried, t.observation, t.clock);
      if (!Number.isInteger(index) || index < 0 || index >= t.legal_plays.length || t.tried.has(index)) {
        throw new Error(`it chose ${JSON.stringify(index)}, not an untried index into ${t.legal_plays.length} legal plays`);
      }
    } catch (err) {
      this.stats.chooseErrors += 1;
      index = t.legal_plays.findIndex((_, i) => !t.tried.has(i));
      this.log(`game ${gameId} turn ${t.turn_id}: strategy failed (${err && err.message}); playing legal play ${index}`);
    }
    if (g.turn !== t || this.games.get(gameId) !== g) {
      this.log(`game ${gameId} turn ${t.turn_id}: decided after the game moved on; answer dropped`);
      return;
    }
    if (index < 0) {
      this.log(`game ${gameId} turn ${t.turn_id}: no legal play left to send`);
      return;
    }
    t.tried.add(index);
    if (t.deadline && Date.now() > t.deadline) {
      this.log(`game ${gameId} turn ${t.turn_id}: answering after the deadline`);
    }
    this.send({ play: { game_id: gameId, turn_id: t.turn_id, index } });
  }

  onPlayRejected(rej) {
    const g = this.games.get(rej.game_id);
    this.log(`game ${rej.game_id} turn ${rej.turn_id}: play rejected: ${rej.reason}`);
    if (!g || !g.turn || String(g.turn.turn_id) !== String(rej.turn_id)) return;
    g.rejects += 1;
    if (g.turn.deadline && Date.now() >= g.turn.deadline) return;
    this.answer(rej.game_id, g); // the next best play not tried yet
  }

  onGameOver(over) {
    const g = this.games.get(over.game_id) || { teams: [], team: -1, turns: 0, rejects: 0 };
    this.games.delete(over.game_id);
    const r = over.result || {};
    const seat = over.seat;
    // Our team: from GameStarted.teams; else seat % number of teams, which is
    // what both team layouts ([[0], [1], ...] and [[0, 2], [1, 3]]) give.
    let team = (g.teams || []).findIndex((seats) => seats.includes(seat));
    if (team < 0 && (r.score || []).length > 0) team = seat % r.score.length;
    if (team < 0) team = g.team;
    let outcome = '?';
    if (r.winner === -1) outcome = 'draw';
    else if (team >= 0) outcome = r.winner === team ? 'won' : 'lost';
    this.stats.games += 1;
    if (outcome === 'won') this.stats.won += 1;
    else if (outcome === 'lost') this.stats.lost += 1;
    else if (outcome === 'draw') this.stats.drawn += 1;
    const forfeit = r.reason === 'forfeit' ? ` (seat ${r.forfeit_seat} forfeited)` : '';
    this.log(
      `game over ${over.game_id}: ${outcome}, seat ${seat}, winner team ${r.winner}, ` +
        `score ${(r.score || []).join('-')}, reason ${r.reason}${forfeit}, turns ${g.turns}, ` +
        `rejected ${g.rejects}, record ${over.record_id || '-'} ` +
        `[total ${this.stats.games}: ${this.stats.won}W ${this.stats.lost}L ${this.stats.drawn}D]`,
    );
  }

  onStreamEnd(status) {
    this.call = null;
    clearTimeout(this.welcomeTimer);
    clearInterval(this.keepaliveTimer);
    this.keepaliveTimer = null;
    if (this.stopping) return;
    const code = status.code;
    const name = statusName(code);
    const details = status.details ? `: ${status.details}` : '';
    const decision = reconnectDecision(status);
    if (decision.fatal) {
      this.onFatal(decision.exitCode, `${name}${details} -- ${decision.hint}`);
      return;
    }
    // Retry on the next replica of the list (the same one if there is only one).
    this.addressIndex = nextAddressIndex(this.addressIndex, this.addresses.length);
    // A draining server ended our live session: the others are ready, go now.
    // (A draining server that refused a new connection gets the usual delay,
    // so a bot with a single address does not hammer it.)
    const backoffMs = decision.draining && this.welcomed ? 0 : this.backoff.next();
    const delay = Math.max(backoffMs, decision.waitAtLeastMs);
    // One line that says why the bot waits, so a long pause is not a mystery.
    const retrying = `retrying ${this.address} in ${(delay / 1000).toFixed(1)} s (${name}${details})`;
    if (code === grpc.status.ALREADY_EXISTS) {
      this.log(`another session of ${this.opts.name} is live; ${retrying}`);
    } else if (code === grpc.status.RESOURCE_EXHAUSTED) {
      this.log(`the server asks ${this.opts.name} to slow down; ${retrying}`);
    } else {
      const when = this.welcomed ? '' : ' before Welcome';
      this.log(
        `stream ended${when} (${name}${details}); reconnecting to ${this.address} in ${(delay / 1000).toFixed(2)} s`,
      );
    }
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  stop(exitCode = 0) {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.welcomeTimer);
    clearInterval(this.keepaliveTimer);
    const call = this.call;
    this.call = null;
    if (call) {
      try {
        call.end(); // half-close: we send no more
      } catch (_) {
        /* already closed */
      }
      call.cancel();
    }
    this.client.close();
    this.onExit(exitCode);
  }
}

function main() {
  let opts;
  try {
    opts = parseOptions();
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`bot.js: ${err.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (opts.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (opts.printVersion) {
    process.stdout.write(`${opts.version}\n`);
    return;
  }
  let bot;
  try {
    bot = new ArenaBot(opts); // loads the protos and reads --ca: fail early and clearly
  } catch (err) {
    process.stderr.write(`bot.js: ${err.message}\n`);
    process.exit(2);
  }
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
      log(`${sig}: closing the stream and exiting`);
      bot.stop(0);
    });
  }
  bot.start();
}

module.exports = {
  ArenaBot,
  Clock,
  BACKOFF_JITTER,
  BACKOFF_MAX_MS,
  BACKOFF_START_MS,
  Backoff,
  DEFAULT_RULES,
  FEATURES,
  LOADER_OPTIONS,
  MAX_RETRY_AFTER_MS,
  WAIT_AT_LEAST_MS,
  captureValue,
  chooseIndex,
  isDraining,
  loadProtos,
  nextAddressIndex,
  parseAddresses,
  parseOptions,
  reconnectDecision,
  retryAfterMs,
  trailKey,
  unpackTurn,
  turnTimeMs,
  versionLabel,
};

if (require.main === module) main();
