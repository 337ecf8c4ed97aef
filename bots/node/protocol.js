// The wire: the tablanette.v1 protos, the label a bot sends in its Hello, and
// the packed form of a Turn.
//
// The .proto files are read at run time from ../../proto (the repository's
// committed wire contract), so there is no generated code to keep in sync.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const { CARD_NAMES, cardName } = require('./rules.js');

// The package.json next to this file: its name and version label the bot in
// its Hello, so a copied and renamed bot reports its own name and version.
const PACKAGE = require('./package.json');
const PROTO_DIR = process.env.TABLANETTE_PROTO_DIR || path.resolve(__dirname, '..', '..', 'proto');

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

/**
 * The label the bot sends as Hello.version (and prints for --version):
 * env TABLANETTE_BOT_VERSION if set, else "<name> <version>" from package.json.
 */
function versionLabel(env = process.env, pkg = PACKAGE) {
  return env.TABLANETTE_BOT_VERSION || `${pkg.name} ${pkg.version}`;
}

// ---------------------------------------------------------------------------
// The packed form (docs/protocol.md#the-packed-form). The bot asks for it in
// its Hello; a turn then carries card numbers (rank * 4 + suit: 0 = AC ...
// 51 = KS) and card masks (bit n = card n) instead of names: less to encode,
// send and decode. unpackTurn() gives it back the named shape, so strategies
// see one form whichever the server sent.

const FEATURES = ['packed'];

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

/** Turn.packed as the named Observation. */
function unpackObservation(p) {
  return {
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
  };
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
    observation: unpackObservation(p),
    legal_plays: turn.legal_cards.map((card, i) => ({ card: cardName(card), captured: namesOf(captured[i]) })),
  };
}

module.exports = { FEATURES, LOADER_OPTIONS, PACKAGE, PROTO_DIR, loadProtos, namesOf, unpackTurn, versionLabel };
