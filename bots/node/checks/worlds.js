// Checks of the possible-worlds helper (worlds.js): the RulesService loads
// from the committed protos, a request for a real turn's observation
// round-trips through the real protobuf encoding, a response reads as named
// worlds, and a bad k is refused before anything is sent.
'use strict';

const assert = require('node:assert/strict');

const { loadRulesService, worldsOf, worldsRequest } = require('../worlds.js');
const { TABLIC, check } = require('./fixtures.js');

const { definition } = loadRulesService();
const method = definition['tablanette.v1.RulesService'].PossibleWorlds;

const OBSERVATION = {
  seat: 1, team: 1, turn: 1, deal_index: 0, dealer: 0, round: 3, rounds_left: 0,
  hand: ['7D', 'KS'], table: ['2H', '5S', '7C'], piles: [{ cards: [] }, { cards: ['AC', 'TD'] }],
  hand_counts: [2, 2], plays: [{ seat: 0, card: 'TD', captured: ['AC'], bonus: 0, auto: false }],
  deal_bonus: [0, 0], scores: [3, 0], unseen: ['2C', 'QS'], stock_count: 0,
};

check('worlds: RulesService/PossibleWorlds loads from the committed protos', () => {
  assert.equal(method.path, '/tablanette.v1.RulesService/PossibleWorlds');
  assert.equal(method.requestStream, false);
});

check('worlds: a request round-trips (observation, resolved rules, k, a 64-bit seed)', () => {
  const request = worldsRequest(TABLIC, OBSERVATION, 32, '18446744073709551615');
  const back = method.requestDeserialize(method.requestSerialize(request));
  assert.equal(back.k, 32);
  assert.equal(back.seed, '18446744073709551615');
  assert.deepEqual(back.observation.hand, ['7D', 'KS']);
  assert.deepEqual(back.observation.plays[0].captured, ['AC']);
  assert.equal(back.resolved.preset, 'tablic');
  const bySpec = method.requestDeserialize(method.requestSerialize(worldsRequest({ spec: { preset: 'pisti', players: 2 } }, OBSERVATION, 1, 0)));
  assert.equal(bySpec.rules.preset, 'pisti');
  assert.equal(bySpec.resolved, null);
});

check('worlds: a response reads as named worlds; a bad k is refused', () => {
  const response = method.responseDeserialize(method.responseSerialize({
    worlds: [{ hands: [{ cards: ['2C', 'QS'] }, { cards: ['7D', 'KS'] }], rounds: [], stock: [] }],
    first_table: ['AC', '2H', '5S', '7C'],
  }));
  assert.deepEqual(worldsOf(response), [{ hands: [['2C', 'QS'], ['7D', 'KS']], rounds: [], stock: [] }]);
  for (const k of [0, 257, 1.5]) assert.throws(() => worldsRequest(TABLIC, OBSERVATION, k, 1), /1 to 256/);
});
