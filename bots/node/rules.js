// The game's cards and the rules a strategy reads (docs/rules.md): card
// names, their order, what a card scores under a variant's GameStarted.rules,
// and the rules assumed when a game's GameStarted was never seen.
'use strict';

const RANKS = 'A23456789TJQK';
const SUITS = 'CDHS';

// Card number n (the packed form, docs/protocol.md) is rank * 4 + suit:
// 0 = AC, 1 = AD, ... 37 = TD, ... 51 = KS.
const CARD_NAMES = Array.from({ length: 52 }, (_, n) => RANKS[n >> 2] + SUITS[n & 3]);

// Used when a Turn arrives for a game whose GameStarted we never saw (for
// example after a reconnect): the default preset `tablic` (docs/rules.md).
const DEFAULT_RULES = Object.freeze({
  preset: 'tablic',
  jack: 'sweep',
  card_points: Object.freeze({ TD: 3, '2C': 2, AC: 1, AD: 1, AH: 1, AS: 1 }),
});

/** The name of card number n (0..51). */
function cardName(n) {
  if (!Number.isInteger(n) || n < 0 || n > 51) throw new Error(`card number ${n} is outside 0..51`);
  return CARD_NAMES[n];
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

/** What the card scores when taken, from rules.card_points (0 if it is not listed). */
function cardPoints(rules, card) {
  const table = (rules && rules.card_points) || {};
  return Number(table[canonical(card)] || 0);
}

function isJack(card) {
  return canonical(card)[0] === 'J';
}

/** True when a Jack sweeps the table under these rules (rules.jack "sweep"), not a numbered card. */
function jackSweeps(rules) {
  return String((rules && rules.jack) || '') === 'sweep';
}

module.exports = {
  CARD_NAMES,
  DEFAULT_RULES,
  RANKS,
  SUITS,
  canonical,
  cardName,
  cardOrder,
  cardPoints,
  isJack,
  jackSweeps,
};
