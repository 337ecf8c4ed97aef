#!/usr/bin/env node
// Tablanette Arena example bot in Node.js: the command line.
//
// Opens ONE bidirectional gRPC stream (tablanette.v1.BotGateway/Connect),
// sends Hello, and then answers every Turn of every game it is given with a
// PlayMove chosen by a small greedy policy (chooseIndex in strategy.js).
//
//   export TABLANETTE_TOKEN=TOKEN      (safer than --token: arguments show in `ps`)
//   node bot.js --address 127.0.0.1:50051 --name my-bot
//
// --address may list several engine replicas ("host1:50051,host2:50051"):
// when a connection fails or ends, the bot tries the next one (see
// reconnect.js).
//
// The modules, one idea each:
//   bot.js        the command line (this file), and everything a bot author
//                 may require in one place
//   session.js    the gRPC client session: Hello, Welcome, keepalive, reconnect
//   reconnect.js  the connection rules: next replica, back-off, fatal codes
//   protocol.js   the wire: protos, the Hello version label, the packed form
//   games.js      each game's state and the bot contract (what choose gets)
//   strategy.js   the greedy policy: chooseIndex
//   rules.js      cards and the rules a strategy reads
'use strict';

const { parseArgs } = require('node:util');

const { Clock, turnTimeMs } = require('./games.js');
const { FEATURES, LOADER_OPTIONS, loadProtos, unpackTurn, versionLabel } = require('./protocol.js');
const reconnect = require('./reconnect.js');
const { DEFAULT_RULES } = require('./rules.js');
const { ArenaBot, log } = require('./session.js');
const { captureValue, chooseIndex, trailKey } = require('./strategy.js');

const { parseAddresses } = reconnect;

const USAGE = `usage: TABLANETTE_TOKEN=TOKEN node bot.js [--address HOST:PORT[,HOST:PORT...]] [--name NAME]
                   [--max-games N] [--tls] [--ca FILE] [--version]

  --address LIST       the arena's bot gateway: one HOST:PORT, or a comma-separated list of
                       engine replicas; after a failure the bot tries the next one
                       (env TABLANETTE_ADDRESS, default 127.0.0.1:50051)
  --token TOKEN        printed once by \`tablanette bot add NAME\`. Prefer the environment
                       variable TABLANETTE_TOKEN: command-line arguments are visible to
                       other users of the machine in \`ps\`
  --name NAME          the bot name the token was issued for (env TABLANETTE_BOT_NAME, default node-greedy)
  --max-games N        games played at once (env TABLANETTE_MAX_GAMES, default 4)
  --tls                connect with TLS (system root certificates)
  --ca FILE            connect with TLS, trusting this PEM CA certificate (implies --tls)
  --version            print the version sent in Hello and exit: "<name> <version>" from
                       package.json (env TABLANETTE_BOT_VERSION replaces it)
  -h, --help           this text`;

class UsageError extends Error {}

/** The flags of argv, or a UsageError naming the one that is wrong. */
function parseFlags(argv) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: false,
      options: {
        address: { type: 'string' },
        token: { type: 'string' },
        name: { type: 'string' },
        'max-games': { type: 'string' },
        tls: { type: 'boolean' },
        ca: { type: 'string' },
        version: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (err) {
    throw new UsageError(err.message);
  }
}

/**
 * The bot's options from the command line, the environment and the defaults
 * (a flag wins over its variable): {addresses, token, name, maxGames, ca, tls,
 * version}, or {help: true}, or {printVersion: true, version}. A bad one
 * throws a UsageError that says what to write.
 */
function parseOptions(argv = process.argv.slice(2), env = process.env) {
  const values = parseFlags(argv);
  if (values.help) return { help: true };
  if (values.version) return { printVersion: true, version: versionLabel(env) };
  const addressText = values.address || env.TABLANETTE_ADDRESS || '127.0.0.1:50051';
  const opts = {
    addresses: parseAddresses(addressText),
    token: values.token || env.TABLANETTE_TOKEN || '',
    name: values.name || env.TABLANETTE_BOT_NAME || 'node-greedy',
    maxGames: Number(values['max-games'] || env.TABLANETTE_MAX_GAMES || 4),
    ca: values.ca || env.TABLANETTE_CA || '',
    tls: Boolean(values.tls || values.ca || env.TABLANETTE_TLS === '1' || env.TABLANETTE_CA),
    version: versionLabel(env),
  };
  if (opts.addresses.length === 0) {
    throw new UsageError(`--address needs at least one HOST:PORT, got ${JSON.stringify(addressText)}`);
  }
  if (!opts.token) {
    throw new UsageError('no token: set TABLANETTE_TOKEN (or pass --token) to the token `tablanette bot add NAME` printed');
  }
  if (!Number.isInteger(opts.maxGames) || opts.maxGames < 1) {
    throw new UsageError(`--max-games must be a positive integer, got ${values['max-games'] || env.TABLANETTE_MAX_GAMES}`);
  }
  return opts;
}

function main() {
  let opts;
  try {
    opts = parseOptions();
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`bot.js: ${err.message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (opts.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (opts.printVersion) {
    process.stdout.write(`${opts.version}\n`);
    return;
  }
  let bot;
  try {
    bot = new ArenaBot(opts); // loads the protos and reads --ca: fail early and clearly
  } catch (err) {
    process.stderr.write(`bot.js: ${err.message}\n`);
    process.exit(2);
  }
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
      log(`${sig}: closing the stream and exiting`);
      bot.stop(0);
    });
  }
  bot.start();
}

module.exports = {
  ArenaBot,
  Clock,
  BACKOFF_JITTER: reconnect.BACKOFF_JITTER,
  BACKOFF_MAX_MS: reconnect.BACKOFF_MAX_MS,
  BACKOFF_START_MS: reconnect.BACKOFF_START_MS,
  Backoff: reconnect.Backoff,
  DEFAULT_RULES,
  FEATURES,
  LOADER_OPTIONS,
  MAX_RETRY_AFTER_MS: reconnect.MAX_RETRY_AFTER_MS,
  USAGE,
  UsageError,
  WAIT_AT_LEAST_MS: reconnect.WAIT_AT_LEAST_MS,
  captureValue,
  chooseIndex,
  isDraining: reconnect.isDraining,
  loadProtos,
  nextAddressIndex: reconnect.nextAddressIndex,
  parseAddresses,
  parseOptions,
  reconnectDecision: reconnect.reconnectDecision,
  retryAfterMs: reconnect.retryAfterMs,
  trailKey,
  unpackTurn,
  turnTimeMs,
  versionLabel,
};

if (require.main === module) main();
