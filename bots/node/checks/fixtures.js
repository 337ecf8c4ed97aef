// The self-test's fixtures, written once: the check registry, the real
// protobuf encoding both ways, hand-made server messages, and a bot whose
// stream is a recorder (no network).
'use strict';

const grpc = require('@grpc/grpc-js');

const { ArenaBot, loadProtos } = require('../bot.js');

// Checks run one after the other, in order (an async one is awaited before the next starts).
const checks = [];
function check(name, fn) {
  checks.push([name, fn]);
}

const { definition, v1 } = loadProtos();
const connect = definition['tablanette.v1.BotGateway'].Connect;

/** Encodes a ServerMessage and decodes it the way the bot's stream does. */
function fromServer(message) {
  return connect.responseDeserialize(connect.responseSerialize(message));
}
/** Encodes a BotMessage and decodes it again (what the server would read). */
function toServer(message) {
  return connect.requestDeserialize(connect.requestSerialize(message));
}

const TABLIC = {
  preset: 'tablic',
  players: 2,
  jack: 'sweep',
  queen: 12,
  king: 13,
  card_points: { TD: 3, '2C': 2, AC: 1, AD: 1, AH: 1, AS: 1 },
  move_time_ms: 1000,
};
const PAGAT = { ...TABLIC, preset: 'tablic-pagat', jack: '12', card_points: { TD: 2, '2C': 1, JC: 1, JD: 1, AH: 1 } };

const WELCOME = { welcome: { session_id: 's1', bot_name: 'node-greedy', keepalive_ms: 60000, grace_ms: 10000 } };

/** A two-player GameStarted: our seat, the rules, one seat per team. */
function gameStarted(gameId, seat, rules = TABLIC) {
  const players = seat === 0 ? ['me', 'y'] : ['x', 'me'];
  return { game_started: { game_id: gameId, seat, players, rules, teams: [{ seats: [0] }, { seats: [1] }] } };
}

/**
 * A Turn message in the named form. `legal` lists [card, captured] pairs
 * (captured left out: a trail); the turn gives `timeLeftMs` to answer.
 */
function turnMessage(gameId, turnId, legal = [['AH'], ['5S']], { table = [], hand = [], seat = 0, timeLeftMs = 5000 } = {}) {
  return {
    turn: {
      game_id: gameId,
      turn_id: String(turnId),
      observation: { seat, table, hand },
      legal_plays: legal.map(([card, captured = []]) => ({ card, captured })),
      deadline_unix_ms: String(Date.now() + timeLeftMs),
      time_left_ms: timeLeftMs,
    },
  };
}

/** A Turn decoded from bytes, exactly as it reaches a strategy. */
function turn(gameId, turnId, table, hand, legal) {
  return fromServer(turnMessage(gameId, turnId, legal, { table, hand })).turn;
}

/** A stream that records what the bot writes on it (decoded, as the server reads it). */
function recorderCall(written) {
  return { destroyed: false, writableEnded: false, write: (m) => written.push(toServer(m)), on() {}, cancel() {} };
}

/**
 * A bot connected to a recorder: it has said Hello and been welcomed. `feed`
 * hands it a server message; `start` and `ask` a GameStarted and a Turn;
 * `sent(kind)` and `plays()` read what it wrote; `welcome()` is a new session
 * (a fresh recorder stream and a Welcome); `close()` stops its timers.
 */
function recordingBot(extra = {}, opts = {}) {
  const logs = [];
  const written = [];
  const bot = new ArenaBot(
    { address: '127.0.0.1:1', token: 't', name: 'node-greedy', maxGames: 4, tls: false, ...opts },
    { v1, logger: (m) => logs.push(m), ...extra },
  );
  const feed = (m) => bot.onMessage(fromServer(m));
  const welcome = () => {
    bot.call = recorderCall(written);
    bot.welcomed = false;
    feed(WELCOME);
  };
  bot.client.Connect = () => recorderCall(written);
  bot.connect();
  feed(WELCOME);
  const sent = (kind) => written.filter((m) => m.kind === kind).map((m) => m[kind]);
  return {
    bot,
    logs,
    written,
    feed,
    welcome,
    sent,
    start: (id, seat, rules) => feed(gameStarted(id, seat, rules)),
    ask: (id, turnId, legal, timeLeftMs) => feed(turnMessage(id, turnId, legal, { timeLeftMs })),
    plays: () => sent('play').map((p) => [p.game_id, p.turn_id, p.index]),
    close: () => {
      clearTimeout(bot.welcomeTimer);
      clearInterval(bot.keepaliveTimer);
      bot.client.close();
    },
  };
}

/** Waits until every answer the bot has queued has been sent (or dropped). */
async function settled(bot) {
  for (let i = 0; i < 3; i++) await Promise.all([...bot.games.values()].map((g) => g.queue));
}

/** grpc-js trailing metadata carrying `retry-after-ms` (or nothing). */
function trailers(retryAfter) {
  const md = new grpc.Metadata();
  if (retryAfter !== undefined) md.set('retry-after-ms', String(retryAfter));
  return md;
}

module.exports = {
  PAGAT,
  TABLIC,
  check,
  checks,
  connect,
  fromServer,
  gameStarted,
  recordingBot,
  settled,
  toServer,
  trailers,
  turn,
  turnMessage,
  v1,
};
