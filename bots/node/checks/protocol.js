// Checks of the wire (protocol.js): the protos load, the bot's messages
// round-trip through the real protobuf encoding, a packed turn reads as the
// named one, an int64 turn_id survives.
'use strict';

const assert = require('node:assert/strict');

const { FEATURES, unpackTurn } = require('../bot.js');
const { check, connect, fromServer, toServer, turn, v1 } = require('./fixtures.js');

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
  const above = fromServer({ turn: { game_id: 'g', turn_id: '9', packed: { hand: String(1n << 52n) } } }).turn;
  assert.throws(() => unpackTurn(above), /bits above the 52 cards/);
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
