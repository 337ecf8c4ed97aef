#!/usr/bin/env node
// The Node.js SDK (bots/node/bot.js) with a test strategy, for
// tests/service/test_sdk_concurrency.py: two games at once, one thinking slowly.
//
// In a game played to 52 points, the first turn thinks (asynchronously) until
// the file named by TABLANETTE_JUGGLER_RELEASE exists, or until 5 s before the
// turn's deadline; every other turn plays the last legal play at once. It logs
// "slow game thinking" when the wait starts, and each game's strategy checks it
// only ever sees its own game. Options as bot.js (--address, --name, --max-games).
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');

const { ArenaBot, parseOptions } = require(path.resolve(__dirname, '../../../bots/node/bot.js'));

function juggler(game) {
  let turns = 0;
  return async (legalPlays, rules, table, exclude, observation, clock) => {
    if (observation.seat !== game.seat) throw new Error(`seat ${observation.seat} in the strategy of seat ${game.seat}`);
    turns += 1;
    if (rules && Number(rules.target) === 52 && turns === 1) {
      process.stderr.write(`juggler: slow game thinking, ${Math.round(clock.remainingMs())} ms left\n`);
      const release = process.env.TABLANETTE_JUGGLER_RELEASE;
      while (!fs.existsSync(release) && clock.remainingMs() > 5000) await sleep(20);
      process.stderr.write('juggler: slow game released\n');
    }
    return legalPlays.length - 1;
  };
}

const bot = new ArenaBot(parseOptions(), { newGame: juggler });
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => bot.stop(0));
bot.start();
