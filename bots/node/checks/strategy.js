// Checks of the greedy policy (strategy.js) on Turns decoded from bytes,
// exactly as they arrive from the server.
'use strict';

const assert = require('node:assert/strict');

const { DEFAULT_RULES, captureValue, chooseIndex } = require('../bot.js');
const { PAGAT, TABLIC, check, turn } = require('./fixtures.js');

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
