// Checks of the command line (bot.js): flags, environment, defaults, the
// replica list, and the version label (printed by --version, sent in Hello).
'use strict';

const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const path = require('node:path');

const { parseAddresses, parseOptions, versionLabel } = require('../bot.js');
const PACKAGE = require('../package.json');
const { check, recordingBot } = require('./fixtures.js');

const BOT_JS = path.join(__dirname, '..', 'bot.js');

check('options: flags, environment and defaults', () => {
  const o = parseOptions(['--token', 'abc', '--max-games', '2'], {});
  assert.deepEqual([o.addresses, o.name, o.maxGames, o.tls], [['127.0.0.1:50051'], 'node-greedy', 2, false]);
  const e = parseOptions([], { TABLANETTE_TOKEN: 'x', TABLANETTE_ADDRESS: 'h:1', TABLANETTE_BOT_NAME: 'b' });
  assert.deepEqual([e.addresses, e.token, e.name, e.maxGames], [['h:1'], 'x', 'b', 4]);
  assert.equal(parseOptions(['--token', 'x', '--ca', 'ca.pem'], {}).tls, true);
  assert.throws(() => parseOptions([], {}), /no token/);
  assert.throws(() => parseOptions(['--token', 'x', '--max-games', '0'], {}), /max-games/);
  assert.throws(() => parseOptions(['--token', 'x', '--bogus'], {}), /bogus/);
});

check('options: --address and TABLANETTE_ADDRESS take a comma-separated replica list', () => {
  assert.deepEqual(parseAddresses('127.0.0.1:50051'), ['127.0.0.1:50051']);
  assert.deepEqual(parseAddresses('a:1,b:2,c:3'), ['a:1', 'b:2', 'c:3']);
  assert.deepEqual(parseAddresses(' a:1 , b:2,, '), ['a:1', 'b:2']); // spaces and empty entries ignored
  assert.deepEqual(parseAddresses('[::1]:50051,dns:///arena.example.org:443'), ['[::1]:50051', 'dns:///arena.example.org:443']);
  assert.deepEqual(parseAddresses(''), []);
  const flag = parseOptions(['--token', 'x', '--address', 'a:1,b:2'], { TABLANETTE_ADDRESS: 'ignored:9' });
  assert.deepEqual(flag.addresses, ['a:1', 'b:2']); // the flag wins over the environment
  const env = parseOptions([], { TABLANETTE_TOKEN: 'x', TABLANETTE_ADDRESS: 'a:1, b:2' });
  assert.deepEqual(env.addresses, ['a:1', 'b:2']);
  assert.throws(() => parseOptions(['--token', 'x', '--address', ' , '], {}), /at least one HOST:PORT/);
});

check('version label: "<package.json name> <version>", env TABLANETTE_BOT_VERSION overrides', () => {
  assert.equal(versionLabel({}), `${PACKAGE.name} ${PACKAGE.version}`);
  assert.equal(versionLabel({}, { name: 'my-bot', version: '2.3.4' }), 'my-bot 2.3.4'); // a copied, renamed bot
  assert.equal(versionLabel({ TABLANETTE_BOT_VERSION: 'custom 9' }), 'custom 9');
  assert.equal(versionLabel({ TABLANETTE_BOT_VERSION: '' }), `${PACKAGE.name} ${PACKAGE.version}`);
  assert.equal(parseOptions(['--token', 'x'], {}).version, `${PACKAGE.name} ${PACKAGE.version}`);
  assert.equal(parseOptions(['--token', 'x'], { TABLANETTE_BOT_VERSION: 'v' }).version, 'v');
  const printed = parseOptions(['--version'], { TABLANETTE_BOT_VERSION: 'v7' });
  assert.deepEqual(printed, { printVersion: true, version: 'v7' });
  // The real command line: `node bot.js --version` prints the label and exits 0.
  const out = execFileSync(process.execPath, [BOT_JS, '--version'], {
    env: { ...process.env, TABLANETTE_BOT_VERSION: '' },
    encoding: 'utf8',
  });
  assert.equal(out, `${PACKAGE.name} ${PACKAGE.version}\n`);
  // ... and the Hello carries it.
  const s = recordingBot({}, { name: 'n', maxGames: 1, version: 'my-bot 1.2.0' });
  try {
    assert.deepEqual(s.sent('hello').map((h) => [h.version, h.bot_name, h.max_games]), [['my-bot 1.2.0', 'n', 1]]);
  } finally {
    s.close();
  }
});

check('command line: a bad flag exits 2 with what is wrong and the usage', () => {
  let failed = null;
  try {
    execFileSync(process.execPath, [BOT_JS, '--bogus'], { env: {}, encoding: 'utf8', stdio: 'pipe' });
  } catch (err) {
    failed = err;
  }
  assert.ok(failed, 'node bot.js --bogus exited 0');
  assert.equal(failed.status, 2);
  assert.match(failed.stderr, /^bot\.js: Unknown option '--bogus'.*\n\nusage: TABLANETTE_TOKEN=TOKEN node bot\.js/s);
});
