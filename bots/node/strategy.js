// Strategy: greedy. Everything a bot author would change lives here: the
// session (session.js, games.js) calls chooseIndex for every turn unless the
// bot is given another `choose` (see "The bot contract" in games.js).
'use strict';

const { DEFAULT_RULES, canonical, cardOrder, cardPoints, isJack, jackSweeps } = require('./rules.js');

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
  return [jackSweeps(rules) && isJack(card) ? 1 : 0, cardPoints(rules, card), cardOrder(card)];
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

module.exports = { captureValue, chooseIndex, trailKey };
