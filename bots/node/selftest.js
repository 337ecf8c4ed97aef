#!/usr/bin/env node
// Offline self-check for bot.js: no network, no server.
//
//   node selftest.js      (or: npm run selftest)
//
// 1. loads the committed .proto files and round-trips the bot's messages
//    through the real protobuf encoding (Hello, PlayMove with a large int64
//    turn_id, Keepalive);
// 2. runs the greedy strategy on hand-made Turn objects decoded from bytes,
//    exactly as they arrive from the server;
// 3. drives the bot's message handling with those decoded messages and
//    checks what it would write on the stream (the stream is a recorder);
// 4. checks the connection rules: the --address replica list, round robin
//    to the next address, the reconnect back-off (0.25 s doubling to 2 s,
//    +-20% jitter, reset by a Welcome), the version label in Hello, and
//    what each status code that ends the stream leads to: exit (bad token,
//    refused Hello), or reconnect, waiting at least 5 s while another
//    session of the bot is live (ALREADY_EXISTS) and 1 s when told to slow
//    down (RESOURCE_EXHAUSTED), or the server's retry-after-ms if longer.
'use strict';

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const {
  ArenaBot,
  Clock,
  BACKOFF_JITTER,
  BACKOFF_MAX_MS,
  BACKOFF_START_MS,
  Backoff,
  DEFAULT_RULES,
  FEATURES,
  MAX_RETRY_AFTER_MS,
  WAIT_AT_LEAST_MS,
  chooseIndex,
  captureValue,
  isDraining,
  loadProtos,
  nextAddressIndex,
  parseAddresses,
  parseOptions,
  reconnectDecision,
  retryAfterMs,
  turnTimeMs,
  unpackTurn,
  versionLabel,
} = require('./bot.js');
const PACKAGE = require('./package.json');

// Checks run one after the other, in order (an async one is awaited before the next starts).
const checks = [];
function check(name, fn) {
  checks.push([name, fn]);
}

/** Waits until every answer the bot has queued has been sent (or dropped). */
async function settled(bot) {
  for (let i = 0; i < 3; i++) await Promise.all([...bot.games.values()].map((g) => g.queue));
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

function turn(gameId, turnId, table, hand, legalPlays) {
  return fromServer({
    turn: {
      game_id: gameId,
      turn_id: turnId,
      observation: { seat: 0, team: 0, table, hand },
      legal_plays: legalPlays.map(([card, captured = []]) => ({ card, captured })),
      deadline_unix_ms: String(Date.now() + 5000),
      time_left_ms: 5000,
    },
  }).turn;
}

check('protos load: BotGateway/Connect is a bidirectional stream', () => {
  assert.equal(connect.path, '/tablanette.v1.BotGateway/Connect');
  assert.equal(connect.requestStream, true);
  assert.equal(connect.responseStream, true);
  assert.equal(typeof v1.BotGateway, 'function');
});

check('Hello serializes with proto field names', () => {
  const hello = { token: 't0k', bot_name: 'node-greedy', version: '1.0.0', max_games: 4, features: FEATURES };
  const bytes = connect.requestSerialize({ hello });
  assert.ok(bytes.length > 0);
  const back = connect.requestDeserialize(bytes);
  assert.equal(back.kind, 'hello');
  assert.deepEqual(back.hello, hello);
});

check('a packed turn reads as the named one (cards by number, sets as masks)', () => {
  const bit = (n) => 1n << BigInt(n);
  const mask = (...ns) => String(ns.reduce((m, n) => m | bit(n), 0n));
  // AC=0 ... TD=37 ... KS=51; 2C=4, 5S=19, 7C=24, 7D=25, 2H=6
  const packed = fromServer({
    turn: {
      game_id: 'g',
      turn_id: '7',
      packed: {
        seat: 1, team: 1, turn: 1, hand: mask(25, 51), table: mask(6, 19, 24), piles: [mask(), mask(0, 37)],
        hand_counts: [2, 2], play_seats: [0], play_cards: [37], play_captured: [mask(0)], play_bonus: [0],
        play_auto: [false], deal_bonus: [0, 0], scores: [3, 0], unseen: mask(4, 50), stock_count: 0,
      },
      legal_cards: [25, 25, 25, 51],
      legal_captured: [mask(), mask(24), mask(6, 19), mask()],
      time_left_ms: 5000,
    },
  }).turn;
  const named = unpackTurn(packed);
  assert.deepEqual(named.observation.hand, ['7D', 'KS']);
  assert.deepEqual(named.observation.table, ['2H', '5S', '7C']);
  assert.deepEqual(named.observation.piles, [{ cards: [] }, { cards: ['AC', 'TD'] }]);
  assert.deepEqual(named.observation.plays, [{ seat: 0, card: 'TD', captured: ['AC'], bonus: 0, auto: false }]);
  assert.deepEqual(named.observation.unseen, ['2C', 'KH']);
  assert.deepEqual(named.legal_plays.map((p) => [p.card, p.captured]), [['7D', []], ['7D', ['7C']], ['7D', ['2H', '5S']], ['KS', []]]);
  assert.equal(named.turn_id, '7');
  const same = turn('g', '8', ['AH'], ['AC'], [['AC', ['AH']]]);
  assert.equal(unpackTurn(same), same, 'a named turn passes through');
  const bad = fromServer({ turn: { game_id: 'g', turn_id: '9', packed: { seat: 0 }, legal_cards: [52], legal_captured: ['0'] } }).turn;
  assert.throws(() => unpackTurn(bad), /outside 0\.\.51/);
});

check('int64 turn_id survives the round trip exactly (beyond 2^53)', () => {
  const big = '9223372036854775807';
  const t = turn('g', big, ['AH'], ['AC'], [['AC', ['AH']], ['AC']]);
  assert.equal(t.turn_id, big);
  const back = toServer({ play: { game_id: 'g', turn_id: t.turn_id, index: 0 } });
  assert.equal(back.play.turn_id, big);
  assert.equal(back.play.choice, 'index');
  assert.equal(back.play.index, 0);
});

check('capture: takes the play that banks the most points', () => {
  // Table 2C 5H 8S TD: 7D takes 2C+5H (2 + 0.3), 8D takes 8S (0.2),
  // TH takes TD (3 + 0.2) or 2C+8S (2 + 0.3) -> TH on TD.
  const t = turn('g', '1', ['2C', '5H', '8S', 'TD'], ['7D', '8D', 'TH'], [
    ['7D'], ['7D', ['2C', '5H']], ['8D'], ['8D', ['8S']], ['TH'], ['TH', ['TD']], ['TH', ['2C', '8S']],
  ]);
  const i = chooseIndex(t.legal_plays, TABLIC, t.observation.table);
  assert.deepEqual([t.legal_plays[i].card, t.legal_plays[i].captured], ['TH', ['TD']]);
  assert.ok(Math.abs(captureValue(TABLIC, t.observation.table, t.legal_plays[i]) - 3.2) < 1e-9);
});

check('capture: clearing the table is worth +1', () => {
  // Table 4H 5S: 9C takes both (clears: 1 + 0.3), 5C takes 5S (0.2).
  const table = ['4H', '5S'];
  assert.ok(Math.abs(captureValue(TABLIC, table, { card: '9C', captured: ['4H', '5S'] }) - 1.3) < 1e-9);
  assert.ok(Math.abs(captureValue(TABLIC, table, { card: '5C', captured: ['5S'] }) - 0.2) < 1e-9);
  const t = turn('g', '2', table, ['5C', '9C'], [['5C'], ['5C', ['5S']], ['9C'], ['9C', ['4H', '5S']]]);
  assert.equal(chooseIndex(t.legal_plays, TABLIC, t.observation.table), 3);
});

check('trail: no capture -> the card with the fewest points, lowest first', () => {
  const t = turn('g', '3', ['KS'], ['2C', 'AH', 'TD', '7S'], [['AH'], ['2C'], ['7S'], ['TD']]);
  const i = chooseIndex(t.legal_plays, TABLIC, t.observation.table);
  assert.equal(t.legal_plays[i].card, '7S');
});

check('trail: keeps a sweeping Jack back when anything else can be trailed', () => {
  // Empty table: every play is a trail; JS has 0 points, AH 1 point -> trail AH, not the Jack.
  const t = turn('g', '4', [], ['AH', 'JS'], [['AH'], ['JS']]);
  assert.equal(t.legal_plays[chooseIndex(t.legal_plays, TABLIC, t.observation.table)].card, 'AH');
  // With a numeric Jack (tablic-pagat: J = 12) the Jack is an ordinary card.
  assert.equal(t.legal_plays[chooseIndex(t.legal_plays, PAGAT, t.observation.table)].card, 'JS');
  // Only a Jack left: trail it anyway.
  const only = turn('g', '5', [], ['JS'], [['JS']]);
  assert.equal(chooseIndex(only.legal_plays, TABLIC, only.observation.table), 0);
});

check('no GameStarted seen: default rules (tablic) still give a sensible play', () => {
  const t = turn('g', '6', ['TD', '3C'], ['TS', 'JH'], [['TS'], ['TS', ['TD']], ['JH'], ['JH', ['3C', 'TD']]]);
  const i = chooseIndex(t.legal_plays, null, t.observation.table);
  // JH sweeps TD+3C: 3 + 1 (clears) + 0.3 = 4.3 beats TS on TD: 3.2.
  assert.equal(i, 3);
  assert.equal(DEFAULT_RULES.jack, 'sweep');
});

check('exclude: the next best play after a rejection', () => {
  const t = turn('g', '7', ['TD', '3C'], ['TS', 'JH'], [['TS'], ['TS', ['TD']], ['JH'], ['JH', ['3C', 'TD']]]);
  assert.equal(chooseIndex(t.legal_plays, TABLIC, t.observation.table, new Set([3])), 1);
  assert.equal(chooseIndex(t.legal_plays, TABLIC, t.observation.table, new Set([0, 1, 2, 3])), -1);
  assert.equal(chooseIndex([], TABLIC, []), -1);
});

check('options: flags, environment and defaults', () => {
  const o = parseOptions(['--token', 'abc', '--max-games', '2'], {});
  assert.deepEqual([o.addresses, o.name, o.maxGames, o.tls], [['127.0.0.1:50051'], 'node-greedy', 2, false]);
  const e = parseOptions([], { TABLANETTE_TOKEN: 'x', TABLANETTE_ADDRESS: 'h:1', TABLANETTE_BOT_NAME: 'b' });
  assert.deepEqual([e.addresses, e.token, e.name, e.maxGames], [['h:1'], 'x', 'b', 4]);
  assert.equal(parseOptions(['--token', 'x', '--ca', 'ca.pem'], {}).tls, true);
  assert.throws(() => parseOptions([], {}), /no token/);
  assert.throws(() => parseOptions(['--token', 'x', '--max-games', '0'], {}), /max-games/);
  assert.throws(() => parseOptions(['--token', 'x', '--bogus'], {}), /bogus/);
});

check('options: --address and TABLANETTE_ADDRESS take a comma-separated replica list', () => {
  assert.deepEqual(parseAddresses('127.0.0.1:50051'), ['127.0.0.1:50051']);
  assert.deepEqual(parseAddresses('a:1,b:2,c:3'), ['a:1', 'b:2', 'c:3']);
  assert.deepEqual(parseAddresses(' a:1 , b:2,, '), ['a:1', 'b:2']); // spaces and empty entries ignored
  assert.deepEqual(parseAddresses('[::1]:50051,dns:///arena.example.org:443'), ['[::1]:50051', 'dns:///arena.example.org:443']);
  assert.deepEqual(parseAddresses(''), []);
  const flag = parseOptions(['--token', 'x', '--address', 'a:1,b:2'], { TABLANETTE_ADDRESS: 'ignored:9' });
  assert.deepEqual(flag.addresses, ['a:1', 'b:2']); // the flag wins over the environment
  const env = parseOptions([], { TABLANETTE_TOKEN: 'x', TABLANETTE_ADDRESS: 'a:1, b:2' });
  assert.deepEqual(env.addresses, ['a:1', 'b:2']);
  assert.throws(() => parseOptions(['--token', 'x', '--address', ' , '], {}), /at least one HOST:PORT/);
});

check('version label: "<package.json name> <version>", env TABLANETTE_BOT_VERSION overrides', () => {
  assert.equal(versionLabel({}), `${PACKAGE.name} ${PACKAGE.version}`);
  assert.equal(versionLabel({}, { name: 'my-bot', version: '2.3.4' }), 'my-bot 2.3.4'); // a copied, renamed bot
  assert.equal(versionLabel({ TABLANETTE_BOT_VERSION: 'custom 9' }), 'custom 9');
  assert.equal(versionLabel({ TABLANETTE_BOT_VERSION: '' }), `${PACKAGE.name} ${PACKAGE.version}`);
  assert.equal(parseOptions(['--token', 'x'], {}).version, `${PACKAGE.name} ${PACKAGE.version}`);
  assert.equal(parseOptions(['--token', 'x'], { TABLANETTE_BOT_VERSION: 'v' }).version, 'v');
  const printed = parseOptions(['--version'], { TABLANETTE_BOT_VERSION: 'v7' });
  assert.deepEqual(printed, { printVersion: true, version: 'v7' });
  // The real command line: `node bot.js --version` prints the label and exits 0.
  const out = execFileSync(process.execPath, [path.join(__dirname, 'bot.js'), '--version'], {
    env: { ...process.env, TABLANETTE_BOT_VERSION: '' },
    encoding: 'utf8',
  });
  assert.equal(out, `${PACKAGE.name} ${PACKAGE.version}\n`);
  // ... and the Hello carries it.
  const bot = new ArenaBot(
    { address: '127.0.0.1:1', token: 't', name: 'n', maxGames: 1, version: 'my-bot 1.2.0' },
    { v1, logger: () => {} },
  );
  const written = [];
  bot.client.Connect = () => {
    const call = { destroyed: false, writableEnded: false, write: (m) => written.push(toServer(m)), on() {}, cancel() {} };
    return call;
  };
  try {
    bot.connect();
    assert.equal(written[0].hello.version, 'my-bot 1.2.0');
  } finally {
    clearTimeout(bot.welcomeTimer);
    bot.client.close();
  }
});

check('round robin: the next address after each failure, wrapping around', () => {
  assert.equal(nextAddressIndex(0, 1), 0); // one address: always the same one
  assert.equal(nextAddressIndex(0, 3), 1);
  assert.equal(nextAddressIndex(1, 3), 2);
  assert.equal(nextAddressIndex(2, 3), 0);
});

check('back-off: 0.25 s doubling to a 2 s cap, jitter within +-20%, reset()', () => {
  assert.deepEqual([BACKOFF_START_MS, BACKOFF_MAX_MS, BACKOFF_JITTER], [250, 2000, 0.2]);
  // random() = 0.5 is "no jitter": the bare sequence.
  const plain = new Backoff({ random: () => 0.5 });
  assert.deepEqual([1, 2, 3, 4, 5, 6].map(() => plain.next()), [250, 500, 1000, 2000, 2000, 2000]);
  plain.reset();
  assert.equal(plain.next(), 250);
  // The extremes of random() give -20% and (almost) +20%.
  const low = new Backoff({ random: () => 0 });
  assert.deepEqual([1, 2, 3, 4, 5].map(() => low.next()), [200, 400, 800, 1600, 1600]);
  const high = new Backoff({ random: () => 0.999999 });
  assert.deepEqual([1, 2, 3, 4, 5].map(() => high.next()), [300, 600, 1200, 2400, 2400]);
  // Math.random: every delay within +-20% of its step, and not all the same.
  const real = new Backoff();
  const seen = new Set();
  for (let round = 0; round < 200; round++) {
    if (round % 10 === 0) real.reset();
    const base = real.baseMs;
    const d = real.next();
    assert.ok(d >= base * 0.8 && d <= base * 1.2, `delay ${d} ms is not within 20% of ${base} ms`);
    assert.ok(d <= 2400);
    seen.add(d);
  }
  assert.ok(seen.size > 20, 'jitter varies the delays');
});

check('draining: UNAVAILABLE "server is shutting down" only', () => {
  assert.equal(isDraining({ code: grpc.status.UNAVAILABLE, details: 'server is shutting down; reconnect' }), true);
  assert.equal(isDraining({ code: grpc.status.UNAVAILABLE, details: 'Server is Shutting Down' }), true);
  assert.equal(isDraining({ code: grpc.status.UNAVAILABLE, details: 'No connection established' }), false);
  assert.equal(isDraining({ code: grpc.status.UNAVAILABLE }), false);
  assert.equal(isDraining({ code: grpc.status.ABORTED, details: 'shutting down' }), false);
});

check('session: answers turns of several games independently, echoes turn_id, retries on rejection', async () => {
  const logs = [];
  const bot = new ArenaBot(
    { address: '127.0.0.1:1', token: 't', name: 'node-greedy', maxGames: 4, tls: false },
    { v1, logger: (m) => logs.push(m) },
  );
  const written = [];
  bot.call = { destroyed: false, writableEnded: false, write: (m) => written.push(toServer(m)) };
  const feed = (m) => bot.onMessage(fromServer(m));
  try {
    feed({ welcome: { session_id: 's1', bot_name: 'node-greedy', keepalive_ms: 60000, grace_ms: 30000 } });
    feed({ game_started: { game_id: 'A', seat: 1, players: ['x', 'me'], rules: TABLIC, teams: [{ seats: [0] }, { seats: [1] }] } });
    feed({ game_started: { game_id: 'B', seat: 0, players: ['me', 'y'], rules: PAGAT, teams: [{ seats: [0] }, { seats: [1] }] } });
    const legal = [{ card: 'AH' }, { card: 'JS' }];
    feed({ turn: { game_id: 'A', turn_id: '18446744073709', observation: { seat: 1, table: [] }, legal_plays: legal, deadline_unix_ms: String(Date.now() + 5000) } });
    feed({ turn: { game_id: 'B', turn_id: '7', observation: { seat: 0, table: [] }, legal_plays: legal, deadline_unix_ms: String(Date.now() + 5000) } });
    // A turn for a game whose GameStarted we missed.
    feed({ turn: { game_id: 'C', turn_id: '1', observation: { seat: 0, table: [] }, legal_plays: legal, deadline_unix_ms: String(Date.now() + 5000) } });
    await settled(bot);
    assert.deepEqual(
      written.map((m) => [m.kind, m.play.game_id, m.play.turn_id, m.play.index]),
      [['play', 'A', '18446744073709', 0], ['play', 'B', '7', 1], ['play', 'C', '1', 0]],
    );
    assert.ok(logs.some((l) => l.includes('game C: turn without GameStarted')));
    // Rejected: answer the same turn again with the next best untried play.
    feed({ play_rejected: { game_id: 'A', turn_id: '18446744073709', reason: 'test' } });
    await settled(bot);
    assert.deepEqual([written[3].play.game_id, written[3].play.turn_id, written[3].play.index], ['A', '18446744073709', 1]);
    // Nothing untried left: no further answer. A stale turn_id: ignored.
    feed({ play_rejected: { game_id: 'A', turn_id: '18446744073709', reason: 'test' } });
    feed({ play_rejected: { game_id: 'B', turn_id: '6', reason: 'stale' } });
    await settled(bot);
    assert.equal(written.length, 4);
    // Game over: one log line, state dropped.
    feed({ game_over: { game_id: 'A', seat: 1, record_id: 'r1', result: { winner: 1, reason: 'target', forfeit_seat: -1, score: [40, 102] } } });
    assert.equal(bot.games.has('A'), false);
    const over = logs.filter((l) => l.startsWith('game over A'));
    assert.equal(over.length, 1);
    assert.match(over[0], /won, seat 1, winner team 1, score 40-102, reason target/);
    // GameOver for a game we know nothing about (4 players, partnerships): seat 3 is team 1.
    feed({ game_over: { game_id: 'Z', seat: 3, result: { winner: 1, reason: 'target', forfeit_seat: -1, score: [60, 101] } } });
    assert.match(logs.find((l) => l.startsWith('game over Z')), /won, seat 3, winner team 1/);
    feed({ keepalive: { unix_ms: '1' } });
    assert.equal(written.length, 4);
  } finally {
    clearInterval(bot.keepaliveTimer);
    bot.client.close();
  }
});

/** A bot whose stream is a recorder; `feed` hands it a decoded server message. */
function recordingBot(extra = {}) {
  const logs = [];
  const bot = new ArenaBot(
    { address: '127.0.0.1:1', token: 't', name: 'node-greedy', maxGames: 4, tls: false },
    { v1, logger: (m) => logs.push(m), ...extra },
  );
  const written = [];
  bot.call = { destroyed: false, writableEnded: false, write: (m) => written.push(toServer(m)) };
  const feed = (m) => bot.onMessage(fromServer(m));
  const start = (id, seat, rules = TABLIC) =>
    feed({ game_started: { game_id: id, seat, players: ['x', 'y'], rules, teams: [{ seats: [0] }, { seats: [1] }] } });
  const ask = (id, turnId, legal = [{ card: 'AH' }, { card: '5S' }], timeLeftMs = 5000) =>
    feed({ turn: { game_id: id, turn_id: String(turnId), observation: { seat: 0, table: [] }, legal_plays: legal,
      deadline_unix_ms: String(Date.now() + timeLeftMs), time_left_ms: timeLeftMs } });
  const plays = () => written.filter((m) => m.kind === 'play').map((m) => [m.play.game_id, m.play.turn_id, m.play.index]);
  return { bot, logs, feed, start, ask, plays, close: () => bot.client.close() };
}

check('contract: newGame makes one strategy per game, with its rules and seat; choose gets the turn\'s clock', async () => {
  const made = [];
  const s = recordingBot({
    newGame: (game) => {
      const mine = { game, turns: 0, clocks: [] };
      made.push(mine);
      return (legal, rules, table, exclude, observation, clock) => {
        mine.turns += 1;
        mine.clocks.push(clock.remainingMs());
        return legal.length - 1;
      };
    },
  });
  try {
    s.start('A', 1);
    s.start('B', 0, PAGAT);
    s.ask('A', 1, undefined, 800);
    s.ask('B', 1);
    await settled(s.bot);
    s.ask('A', 2);
    s.ask('C', 1); // never saw it start: made at its first turn, without rules
    await settled(s.bot);
    assert.deepEqual(made.map((m) => [m.game.gameId, m.game.seat, m.game.rules && m.game.rules.preset, m.turns]),
      [['A', 1, 'tablic', 2], ['B', 0, 'tablic-pagat', 1], ['C', 0, null, 1]]);
    assert.deepEqual(s.plays(), [['A', '1', 1], ['B', '1', 1], ['A', '2', 1], ['C', '1', 1]]);
    const first = made[0].clocks[0];
    assert.ok(first > 0 && first <= 800, `remainingMs ${first} within the turn's 800 ms`);
    const clock = new Clock(1000, 0);
    assert.equal(clock.deadline, 1000);
    assert.equal(turnTimeMs({ time_left_ms: 250, deadline_unix_ms: String(Date.now() + 9000) }), 250);
    const fromDeadline = turnTimeMs({ time_left_ms: 0, deadline_unix_ms: String(Date.now() + 9000) });
    assert.ok(fromDeadline > 8000 && fromDeadline <= 9000, `${fromDeadline}`);
  } finally {
    s.close();
  }
});

check('contract: a slow game does not hold up another; one game\'s calls never overlap', async () => {
  let release;
  const slowThinking = new Promise((resolve) => {
    release = resolve;
  });
  const calls = [];
  const s = recordingBot({
    newGame: (game) => async (legal) => {
      calls.push(`${game.gameId}:start`);
      if (game.gameId === 'slow') await slowThinking; // thinking asynchronously, for as long as it takes
      calls.push(`${game.gameId}:end`);
      return legal.length - 1;
    },
  });
  try {
    s.start('slow', 0);
    s.start('fast', 1);
    s.ask('slow', 1);
    for (let turn = 1; turn <= 5; turn++) {
      s.ask('fast', turn);
      await settled(s.bot.games.has('slow') ? { games: new Map([['fast', s.bot.games.get('fast')]]) } : s.bot);
    }
    // Five fast answers while the slow game's first turn is still thinking.
    assert.deepEqual(s.plays(), [1, 2, 3, 4, 5].map((t) => ['fast', String(t), 1]));
    s.ask('slow', 2); // the engine moved on (turn 1 timed out): turn 2 waits for turn 1's choose to settle
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(calls.filter((c) => c === 'slow:start').length, 1, 'no second call while the first is pending');
    release();
    await settled(s.bot);
    // Turn 1's late answer is dropped (its turn is gone); turn 2 is answered.
    assert.deepEqual(s.plays().filter(([g]) => g === 'slow'), [['slow', '2', 1]]);
    assert.ok(s.logs.some((l) => /game slow turn 1: decided after the game moved on; answer dropped/.test(l)));
    assert.deepEqual(calls.filter((c) => c.startsWith('slow')), ['slow:start', 'slow:end', 'slow:start', 'slow:end']);
  } finally {
    s.close();
  }
});

check('contract: a choose that throws, rejects or answers nonsense costs a move, not the connection', async () => {
  const behaviours = [
    () => { throw new Error('a bug'); },
    () => Promise.reject(new Error('an async bug')),
    () => 7,
    () => 'one',
    () => undefined,
  ];
  let n = 0;
  const s = recordingBot({ choose: (...args) => behaviours[n++ % behaviours.length](...args) });
  try {
    s.start('G', 0);
    for (let turn = 1; turn <= behaviours.length; turn++) {
      s.ask('G', turn);
      await settled(s.bot);
    }
    // Each answered with legal_plays[0], the engine's own timeout play; the stream is untouched.
    assert.deepEqual(s.plays(), [1, 2, 3, 4, 5].map((t) => ['G', String(t), 0]));
    assert.equal(s.bot.stats.chooseErrors, 5);
    assert.ok(s.logs.some((l) => /strategy failed \(a bug\); playing legal play 0/.test(l)));
    assert.ok(s.logs.some((l) => /strategy failed \(it chose 7, not an untried index into 2 legal plays\)/.test(l)));
    assert.ok(s.bot.call && !s.bot.stopping);
    // After a rejection the fallback is the first play not tried yet.
    s.feed({ play_rejected: { game_id: 'G', turn_id: '5', reason: 'test' } });
    await settled(s.bot);
    assert.deepEqual(s.plays().at(-1), ['G', '5', 1]);
  } finally {
    s.close();
  }
});

/**
 * Records every reconnect the bot schedules ([address, delay], through a stand-in
 * setTimeout that runs nothing) and gives it a Welcome on demand; restore() puts
 * the real setTimeout back.
 */
function reconnectRecorder(bot) {
  const reconnects = [];
  const realSetTimeout = global.setTimeout;
  global.setTimeout = (fn, ms) => {
    reconnects.push([bot.address, ms]);
    return { ref() {}, unref() {} };
  };
  const welcome = () => {
    bot.call = { destroyed: false, writableEnded: false, write: () => {} };
    bot.welcomed = false;
    bot.onMessage(fromServer({ welcome: { session_id: 's', keepalive_ms: 60000, grace_ms: 10000 } }));
    clearInterval(bot.keepaliveTimer);
  };
  return { reconnects, welcome, restore: () => (global.setTimeout = realSetTimeout) };
}

check('session: reconnects round robin with back-off, reset on Welcome, at once after a drain; fatal codes exit', () => {
  const logs = [];
  const bot = new ArenaBot(
    { addresses: ['a:1', 'b:2', 'c:3'], token: 't', name: 'n', maxGames: 1, tls: false },
    { v1, logger: (m) => logs.push(m), random: () => 0.5 }, // random 0.5: no jitter, exact delays
  );
  const { reconnects, welcome, restore } = reconnectRecorder(bot);
  try {
    assert.equal(bot.address, 'a:1'); // the first address first
    // Replicas unreachable: every attempt goes to the next address, delays double to 2 s.
    for (let i = 0; i < 6; i++) {
      bot.welcomed = false;
      bot.onStreamEnd({ code: grpc.status.UNAVAILABLE, details: 'No connection established' });
    }
    assert.deepEqual(reconnects, [['b:2', 250], ['c:3', 500], ['a:1', 1000], ['b:2', 2000], ['c:3', 2000], ['a:1', 2000]]);
    assert.match(logs.at(-1), /reconnecting to a:1 in 2\.00 s/);
    // Welcomed on a:1, then the replica dies: b:2 after 0.25 s again.
    welcome();
    bot.onStreamEnd({ code: grpc.status.UNAVAILABLE, details: 'Connection dropped' });
    assert.deepEqual(reconnects.at(-1), ['b:2', 250]);
    // Other broken-transport codes are retried the same way.
    bot.welcomed = false;
    bot.onStreamEnd({ code: grpc.status.INTERNAL, details: 'Received RST_STREAM' });
    bot.welcomed = false;
    bot.onStreamEnd({ code: grpc.status.DEADLINE_EXCEEDED, details: '' });
    assert.deepEqual(reconnects.slice(-2), [['c:3', 500], ['a:1', 1000]]);
    // Welcomed on a:1, then it drains: straight to b:2, no delay, back-off untouched.
    welcome();
    bot.onStreamEnd({ code: grpc.status.UNAVAILABLE, details: 'server is shutting down; reconnect' });
    assert.deepEqual(reconnects.at(-1), ['b:2', 0]);
    // b:2 is draining too and refuses us before a Welcome: the usual delay, next address.
    bot.welcomed = false;
    bot.onStreamEnd({ code: grpc.status.UNAVAILABLE, details: 'server is shutting down; connect to another replica' });
    assert.deepEqual(reconnects.at(-1), ['c:3', 250]);
    const count = reconnects.length;
    let fatal = null;
    bot.onFatal = (code, message) => {
      fatal = { code, message };
    };
    bot.onStreamEnd({ code: grpc.status.UNAUTHENTICATED, details: 'bad token' });
    assert.equal(fatal.code, 2);
    assert.match(fatal.message, /UNAUTHENTICATED: bad token -- the token is wrong/);
    bot.onStreamEnd({ code: grpc.status.PERMISSION_DENIED, details: 'other bot' });
    assert.equal(fatal.code, 2);
    bot.onStreamEnd({ code: grpc.status.INVALID_ARGUMENT, details: 'no Hello' });
    assert.deepEqual([fatal.code, /refused our Hello/.test(fatal.message)], [1, true]);
    bot.onStreamEnd({ code: grpc.status.UNIMPLEMENTED, details: '' });
    assert.deepEqual([fatal.code, /does not serve/.test(fatal.message)], [1, true]);
    assert.equal(reconnects.length, count); // no reconnect scheduled for fatal codes
    // A revoked token closes the live session: still fatal.
    fatal = null;
    welcome();
    bot.onStreamEnd({ code: grpc.status.UNAUTHENTICATED, details: "this bot's token was revoked" });
    assert.equal(fatal.code, 2);
    assert.match(fatal.message, /token was revoked -- the token is wrong, unknown or revoked/);
    assert.equal(reconnects.length, count);
  } finally {
    restore();
    bot.client.close();
  }
});

/** grpc-js trailing metadata carrying `retry-after-ms` (or nothing). */
function trailers(retryAfter) {
  const md = new grpc.Metadata();
  if (retryAfter !== undefined) md.set('retry-after-ms', String(retryAfter));
  return md;
}

check('refusals: retry-after-ms hint and the decision per status code', () => {
  assert.equal(retryAfterMs(trailers(7000)), 7000);
  assert.equal(retryAfterMs(trailers()), 0);
  assert.equal(retryAfterMs(undefined), 0);
  assert.equal(retryAfterMs(trailers('soon')), 0); // not a number: ignored
  assert.equal(retryAfterMs(trailers('-5')), 0);
  assert.equal(retryAfterMs(trailers(1e12)), MAX_RETRY_AFTER_MS); // absurd: capped
  assert.deepEqual([WAIT_AT_LEAST_MS[grpc.status.ALREADY_EXISTS], WAIT_AT_LEAST_MS[grpc.status.RESOURCE_EXHAUSTED]], [5000, 1000]);
  const decide = (code, details, retryAfter) => reconnectDecision({ code, details, metadata: trailers(retryAfter) });
  // Fatal: credentials exit 2, the other two exit 1.
  assert.deepEqual([decide(grpc.status.UNAUTHENTICATED).fatal, decide(grpc.status.UNAUTHENTICATED).exitCode], [true, 2]);
  assert.deepEqual([decide(grpc.status.PERMISSION_DENIED).fatal, decide(grpc.status.PERMISSION_DENIED).exitCode], [true, 2]);
  assert.deepEqual([decide(grpc.status.INVALID_ARGUMENT).fatal, decide(grpc.status.INVALID_ARGUMENT).exitCode], [true, 1]);
  assert.deepEqual([decide(grpc.status.UNIMPLEMENTED).fatal, decide(grpc.status.UNIMPLEMENTED).exitCode], [true, 1]);
  // Waits: the floor per code, or the hint when it is longer (never shorter than the floor).
  assert.deepEqual(decide(grpc.status.ALREADY_EXISTS, 'live'), { fatal: false, waitAtLeastMs: 5000, draining: false });
  assert.equal(decide(grpc.status.ALREADY_EXISTS, 'live', 8000).waitAtLeastMs, 8000);
  assert.equal(decide(grpc.status.ALREADY_EXISTS, 'live', 100).waitAtLeastMs, 5000);
  assert.equal(decide(grpc.status.RESOURCE_EXHAUSTED, 'slow').waitAtLeastMs, 1000);
  assert.equal(decide(grpc.status.RESOURCE_EXHAUSTED, 'slow', 2500).waitAtLeastMs, 2500);
  assert.equal(decide(grpc.status.RESOURCE_EXHAUSTED, 'slow', 10).waitAtLeastMs, 1000);
  // Everything else: the normal back-off (a hint still counts).
  for (const code of [grpc.status.ABORTED, grpc.status.UNAVAILABLE, grpc.status.CANCELLED, grpc.status.INTERNAL,
    grpc.status.UNKNOWN, grpc.status.DEADLINE_EXCEEDED, grpc.status.OK, grpc.status.NOT_FOUND,
    grpc.status.FAILED_PRECONDITION]) {
    assert.deepEqual(decide(code, 'x'), { fatal: false, waitAtLeastMs: 0, draining: false }, `code ${code}`);
  }
  assert.equal(decide(grpc.status.UNAVAILABLE, 'busy', 3000).waitAtLeastMs, 3000);
  assert.equal(decide(grpc.status.UNAVAILABLE, 'server is shutting down').draining, true);
});

check('session: ABORTED, ALREADY_EXISTS and RESOURCE_EXHAUSTED reconnect (and wait), never exit', () => {
  const logs = [];
  const bot = new ArenaBot(
    { addresses: ['a:1', 'b:2'], token: 't', name: 'my-bot', maxGames: 1, tls: false },
    { v1, logger: (m) => logs.push(m), random: () => 0.5 }, // random 0.5: no jitter, exact delays
  );
  let fatal = null;
  bot.onFatal = (code, message) => {
    fatal = { code, message };
  };
  const { reconnects, welcome, restore } = reconnectRecorder(bot);
  const refused = (code, details, retryAfter) => {
    bot.welcomed = false;
    bot.onStreamEnd({ code, details, metadata: trailers(retryAfter) });
  };
  try {
    // Our quiet session was replaced by a newer one: reconnect with the normal back-off (reset by the Welcome).
    welcome();
    bot.onStreamEnd({ code: grpc.status.ABORTED, details: 'replaced by a newer session', metadata: trailers() });
    assert.deepEqual(reconnects.at(-1), ['b:2', 250]);
    assert.match(logs.at(-1), /stream ended \(ABORTED: replaced by a newer session\); reconnecting to b:2 in 0\.25 s/);
    // The newer session is live: refused with ALREADY_EXISTS, wait at least 5 s, keep going round robin.
    refused(grpc.status.ALREADY_EXISTS, 'bot is connected already', 5000);
    assert.deepEqual(reconnects.at(-1), ['a:1', 5000]);
    assert.match(logs.at(-1), /^another session of my-bot is live; retrying a:1 in 5\.0 s \(ALREADY_EXISTS: bot is connected already\)$/);
    // Without a hint: still 5 s. A longer hint wins.
    refused(grpc.status.ALREADY_EXISTS, 'bot is connected already');
    assert.deepEqual(reconnects.at(-1), ['b:2', 5000]);
    refused(grpc.status.ALREADY_EXISTS, 'bot is connected already', 12000);
    assert.deepEqual(reconnects.at(-1), ['a:1', 12000]);
    assert.match(logs.at(-1), /retrying a:1 in 12\.0 s/);
    // Slow down: at least 1 s, or the hint. The back-off (now at 2 s) still counts when it is longer.
    bot.backoff = new Backoff({ random: () => 0.5 }); // from 0.25 s again, to see where it overtakes the floor
    refused(grpc.status.RESOURCE_EXHAUSTED, 'more than 20 Hellos per second; retry in 40 ms', 40);
    assert.deepEqual(reconnects.at(-1), ['b:2', 1000]);
    assert.match(logs.at(-1), /^the server asks my-bot to slow down; retrying b:2 in 1\.0 s \(RESOURCE_EXHAUSTED: /);
    refused(grpc.status.RESOURCE_EXHAUSTED, 'this token says Hello too often', 3500);
    assert.deepEqual(reconnects.at(-1), ['a:1', 3500]);
    refused(grpc.status.RESOURCE_EXHAUSTED, 'the bot does not read its stream');
    assert.deepEqual(reconnects.at(-1), ['b:2', 1000]);
    refused(grpc.status.RESOURCE_EXHAUSTED, 'the bot does not read its stream');
    assert.deepEqual(reconnects.at(-1), ['a:1', 2000]); // back-off 0.25, 0.5, 1, 2: 2 s beats the 1 s floor
    // Welcomed at last: the back-off starts over.
    welcome();
    bot.onStreamEnd({ code: grpc.status.UNAVAILABLE, details: 'Connection dropped' });
    assert.deepEqual(reconnects.at(-1), ['b:2', 250]);
    assert.equal(fatal, null); // none of these ever exits
    assert.equal(reconnects.length, 9);
  } finally {
    restore();
    bot.client.close();
  }
});

check('clock: a CLOCK_CPU turn counts this process\'s CPU time, not the time it waits', async () => {
  const cpu = new Clock(500, performance.now(), true);
  const wall = new Clock(500, performance.now());
  await new Promise((resolve) => setTimeout(resolve, 300)); // waiting: no CPU time
  assert.ok(cpu.remainingMs() > 400, `cpu clock ran while waiting: ${cpu.remainingMs()}`);
  assert.ok(wall.remainingMs() <= 200, `wall clock did not run: ${wall.remainingMs()}`);
  const start = process.cpuUsage();
  for (;;) { // computing: 200 ms of CPU time
    const used = process.cpuUsage(start);
    if (used.user + used.system >= 200_000) break;
  }
  assert.ok(cpu.remainingMs() <= 300, `cpu clock did not run while computing: ${cpu.remainingMs()}`);
});

(async () => {
  for (const [name, fn] of checks) {
    await fn();
    process.stdout.write(`ok   ${name}\n`);
  }
  process.stdout.write(`\nselftest: ${checks.length} checks passed\n`);
})().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
