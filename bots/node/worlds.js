// Possible worlds from the arena's Rules API (docs/protocol.md, "Possible
// worlds"): K completions of what this seat has seen (the hand every other
// seat holds now, the hands still to be dealt), drawn as the shuffle deals
// them. A bot that looks ahead plays its candidate moves on each world.
//
//   const { rulesClient, possibleWorlds } = require('./worlds.js');
//   const client = rulesClient('127.0.0.1:50051');
//   const worlds = await possibleWorlds(client, game.rules, turn.observation, 16, 1);
//   // worlds[i].hands[seat], worlds[i].rounds[r][seat]: card names; worlds[i].stock
//
// `rules` is the resolved Rules of the game's GameStarted (or null: then give
// a RulesSpec as { spec: { preset, players } } in its place). The same
// observation and seed give the same worlds.
'use strict';

const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const { LOADER_OPTIONS, PROTO_DIR } = require('./protocol.js');

const MAX_WORLDS = 256;

/** Loads tablanette/v1/rules.proto: the RulesService and its messages. */
function loadRulesService(protoDir = PROTO_DIR) {
  const definition = protoLoader.loadSync(['tablanette/v1/rules.proto'], { ...LOADER_OPTIONS, includeDirs: [protoDir] });
  return { definition, v1: grpc.loadPackageDefinition(definition).tablanette.v1 };
}

/** A RulesService client on `address` (one of the engine replicas a bot connects to). */
function rulesClient(address, { protoDir = PROTO_DIR, credentials = grpc.credentials.createInsecure() } = {}) {
  const { v1 } = loadRulesService(protoDir);
  return new v1.RulesService(address, credentials);
}

/** The PossibleWorldsRequest for a named observation; throws RangeError on a k outside 1..256. */
function worldsRequest(rules, observation, k, seed) {
  if (!Number.isInteger(k) || k < 1 || k > MAX_WORLDS) throw new RangeError(`k = ${k}: ask for 1 to ${MAX_WORLDS} worlds`);
  if (!observation) throw new TypeError('give the seat\'s observation (turn.observation)');
  const request = { observation, k, seed: String(seed) };
  if (rules && rules.spec) request.rules = rules.spec;
  else if (rules) request.resolved = rules;
  return request;
}

/** The worlds of a PossibleWorldsResponse as plain arrays of card names. */
function worldsOf(response) {
  return (response.worlds || []).map((w) => ({
    hands: w.hands.map((h) => h.cards),
    rounds: w.rounds.map((r) => r.hands.map((h) => h.cards)),
    stock: w.stock,
  }));
}

/** Asks for `k` worlds; resolves to worldsOf(response), rejects with the gRPC error (INVALID_ARGUMENT names the bad input). */
function possibleWorlds(client, rules, observation, k, seed, { deadlineMs = 5000 } = {}) {
  const request = worldsRequest(rules, observation, k, seed);
  return new Promise((resolve, reject) => {
    client.PossibleWorlds(request, { deadline: Date.now() + deadlineMs }, (err, response) => {
      if (err) reject(err);
      else resolve(worldsOf(response));
    });
  });
}

module.exports = { MAX_WORLDS, loadRulesService, possibleWorlds, rulesClient, worldsOf, worldsRequest };
