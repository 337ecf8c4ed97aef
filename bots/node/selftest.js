#!/usr/bin/env node
// Offline self-check for the bot: no network, no server.
//
//   node selftest.js      (or: npm test)
//
// The checks live in checks/, one file per module they check, with the
// fixtures they share written once in checks/fixtures.js:
//
//   checks/protocol.js   the committed .proto files load; the bot's messages
//                        round-trip through the real protobuf encoding (Hello,
//                        PlayMove with a large int64 turn_id); a packed turn
//                        reads as the named one
//   checks/strategy.js   the greedy strategy on hand-made Turns decoded from
//                        bytes, exactly as they arrive from the server
//   checks/cli.js        flags, environment, the --address replica list, the
//                        version label in Hello, the real command line's exits
//   checks/reconnect.js  round robin to the next address, the back-off (0.25 s
//                        doubling to 2 s, +-20% jitter, reset by a Welcome),
//                        and what each status code that ends the stream leads
//                        to: exit (bad token, refused Hello), or reconnect,
//                        waiting at least 5 s while another session of the bot
//                        is live (ALREADY_EXISTS) and 1 s when told to slow
//                        down (RESOURCE_EXHAUSTED), or the server's
//                        retry-after-ms if longer
//   checks/games.js      the bot's message handling with decoded messages,
//                        checking what it writes on the stream (a recorder):
//                        several games, rejections, pings, the bot contract,
//                        the turn's clock
//   checks/worlds.js     the possible-worlds helper: the RulesService loads, a
//                        request round-trips, a response reads as named worlds
'use strict';

const { checks } = require('./checks/fixtures.js');

for (const file of ['protocol', 'strategy', 'cli', 'reconnect', 'games', 'worlds']) require(`./checks/${file}.js`);

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
