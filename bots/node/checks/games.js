// Checks of the games a session plays (games.js, fed by session.js): the bot
// is driven with decoded server messages and its stream is a recorder. Turns
// of several games, rejections, game over, the bot contract (a strategy per
// game, a slow game beside a fast one, a failing strategy), the turn's clock,
// and the answer to a server's ping.
'use strict';

const assert = require('node:assert/strict');
const { performance } = require('node:perf_hooks');

const { Clock, turnTimeMs } = require('../bot.js');
const { PAGAT, check, recordingBot, settled, turnMessage } = require('./fixtures.js');

check('session: answers turns of several games independently, echoes turn_id, retries on rejection', async () => {
  const s = recordingBot();
  try {
    s.start('A', 1);
    s.start('B', 0, PAGAT);
    const legal = [['AH'], ['JS']];
    s.feed(turnMessage('A', '18446744073709', legal, { seat: 1 }));
    s.feed(turnMessage('B', '7', legal));
    // A turn for a game whose GameStarted we missed.
    s.feed(turnMessage('C', '1', legal));
    await settled(s.bot);
    assert.deepEqual(s.plays(), [['A', '18446744073709', 0], ['B', '7', 1], ['C', '1', 0]]);
    assert.ok(s.logs.some((l) => l.includes('game C: turn without GameStarted')));
    // Rejected: answer the same turn again with the next best untried play.
    s.feed({ play_rejected: { game_id: 'A', turn_id: '18446744073709', reason: 'test' } });
    await settled(s.bot);
    assert.deepEqual(s.plays()[3], ['A', '18446744073709', 1]);
    // Nothing untried left: no further answer. A stale turn_id: ignored.
    s.feed({ play_rejected: { game_id: 'A', turn_id: '18446744073709', reason: 'test' } });
    s.feed({ play_rejected: { game_id: 'B', turn_id: '6', reason: 'stale' } });
    await settled(s.bot);
    assert.equal(s.plays().length, 4);
    assert.ok(s.logs.some((l) => l === 'game A turn 18446744073709: no legal play left to send'));
    // Game over: one log line, state dropped.
    s.feed({ game_over: { game_id: 'A', seat: 1, record_id: 'r1', result: { winner: 1, reason: 'target', forfeit_seat: -1, score: [40, 102] } } });
    assert.equal(s.bot.games.has('A'), false);
    const over = s.logs.filter((l) => l.startsWith('game over A'));
    assert.equal(over.length, 1);
    assert.match(over[0], /won, seat 1, winner team 1, score 40-102, reason target/);
    // GameOver for a game we know nothing about (4 players, partnerships): seat 3 is team 1.
    s.feed({ game_over: { game_id: 'Z', seat: 3, result: { winner: 1, reason: 'target', forfeit_seat: -1, score: [60, 101] } } });
    assert.match(s.logs.find((l) => l.startsWith('game over Z')), /won, seat 3, winner team 1/);
    // (chooseIndex's -1 after the second rejection counts as a strategy failure.)
    assert.deepEqual(s.bot.stats, { games: 2, won: 2, lost: 0, drawn: 0, chooseErrors: 1 });
  } finally {
    s.close();
  }
});

check('session: a server ping is echoed at once, a plain keepalive is not', () => {
  const s = recordingBot();
  try {
    s.feed({ keepalive: { unix_ms: '1' } });
    assert.deepEqual(s.sent('keepalive'), []);
    s.feed({ keepalive: { unix_ms: '2', echo: '9007199254740993' } });
    assert.deepEqual(s.sent('keepalive').map((k) => k.echo), ['9007199254740993']);
  } finally {
    s.close();
  }
});

check('contract: newGame makes one strategy per game, with its rules and seat; choose gets the turn\'s clock', async () => {
  const made = [];
  const s = recordingBot({
    newGame: (game) => {
      const mine = { game, turns: 0, clocks: [] };
      made.push(mine);
      return (legal, rules, table, exclude, observation, clock) => {
        mine.turns += 1;
        mine.clocks.push(clock.remainingMs());
        return legal.length - 1;
      };
    },
  });
  try {
    s.start('A', 1);
    s.start('B', 0, PAGAT);
    s.ask('A', 1, undefined, 800);
    s.ask('B', 1);
    await settled(s.bot);
    s.ask('A', 2);
    s.ask('C', 1); // never saw it start: made at its first turn, without rules
    await settled(s.bot);
    assert.deepEqual(made.map((m) => [m.game.gameId, m.game.seat, m.game.rules && m.game.rules.preset, m.turns]),
      [['A', 1, 'tablic', 2], ['B', 0, 'tablic-pagat', 1], ['C', 0, null, 1]]);
    assert.deepEqual(s.plays(), [['A', '1', 1], ['B', '1', 1], ['A', '2', 1], ['C', '1', 1]]);
    const first = made[0].clocks[0];
    assert.ok(first > 0 && first <= 800, `remainingMs ${first} within the turn's 800 ms`);
    const clock = new Clock(1000, 0);
    assert.equal(clock.deadline, 1000);
    assert.equal(turnTimeMs({ time_left_ms: 250, deadline_unix_ms: String(Date.now() + 9000) }), 250);
    const fromDeadline = turnTimeMs({ time_left_ms: 0, deadline_unix_ms: String(Date.now() + 9000) });
    assert.ok(fromDeadline > 8000 && fromDeadline <= 9000, `${fromDeadline}`);
  } finally {
    s.close();
  }
});

check('contract: a slow game does not hold up another; one game\'s calls never overlap', async () => {
  let release;
  const slowThinking = new Promise((resolve) => {
    release = resolve;
  });
  const calls = [];
  const s = recordingBot({
    newGame: (game) => async (legal) => {
      calls.push(`${game.gameId}:start`);
      if (game.gameId === 'slow') await slowThinking; // thinking asynchronously, for as long as it takes
      calls.push(`${game.gameId}:end`);
      return legal.length - 1;
    },
  });
  try {
    s.start('slow', 0);
    s.start('fast', 1);
    s.ask('slow', 1);
    for (let turn = 1; turn <= 5; turn++) {
      s.ask('fast', turn);
      await settled(s.bot.games.has('slow') ? { games: new Map([['fast', s.bot.games.get('fast')]]) } : s.bot);
    }
    // Five fast answers while the slow game's first turn is still thinking.
    assert.deepEqual(s.plays(), [1, 2, 3, 4, 5].map((t) => ['fast', String(t), 1]));
    s.ask('slow', 2); // the engine moved on (turn 1 timed out): turn 2 waits for turn 1's choose to settle
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(calls.filter((c) => c === 'slow:start').length, 1, 'no second call while the first is pending');
    release();
    await settled(s.bot);
    // Turn 1's late answer is dropped (its turn is gone); turn 2 is answered.
    assert.deepEqual(s.plays().filter(([g]) => g === 'slow'), [['slow', '2', 1]]);
    assert.ok(s.logs.some((l) => /game slow turn 1: decided after the game moved on; answer dropped/.test(l)));
    assert.deepEqual(calls.filter((c) => c.startsWith('slow')), ['slow:start', 'slow:end', 'slow:start', 'slow:end']);
  } finally {
    s.close();
  }
});

check('contract: a choose that throws, rejects or answers nonsense costs a move, not the connection', async () => {
  const behaviours = [
    () => { throw new Error('a bug'); },
    () => Promise.reject(new Error('an async bug')),
    () => 7,
    () => 'one',
    () => undefined,
  ];
  let n = 0;
  const s = recordingBot({ choose: (...args) => behaviours[n++ % behaviours.length](...args) });
  try {
    s.start('G', 0);
    for (let turn = 1; turn <= behaviours.length; turn++) {
      s.ask('G', turn);
      await settled(s.bot);
    }
    // Each answered with legal_plays[0], the engine's own timeout play; the stream is untouched.
    assert.deepEqual(s.plays(), [1, 2, 3, 4, 5].map((t) => ['G', String(t), 0]));
    assert.equal(s.bot.stats.chooseErrors, 5);
    assert.ok(s.logs.some((l) => /strategy failed \(a bug\); playing legal play 0/.test(l)));
    assert.ok(s.logs.some((l) => /strategy failed \(it chose 7, not an untried index into 2 legal plays\)/.test(l)));
    assert.ok(s.bot.call && !s.bot.stopping);
    // After a rejection the fallback is the first play not tried yet.
    s.feed({ play_rejected: { game_id: 'G', turn_id: '5', reason: 'test' } });
    await settled(s.bot);
    assert.deepEqual(s.plays().at(-1), ['G', '5', 1]);
  } finally {
    s.close();
  }
});

check('clock: a CLOCK_CPU turn counts this process\'s CPU time, not the time it waits', async () => {
  const cpu = new Clock(500, performance.now(), true);
  const wall = new Clock(500, performance.now());
  await new Promise((resolve) => setTimeout(resolve, 300)); // waiting: no CPU time
  assert.ok(cpu.remainingMs() > 400, `cpu clock ran while waiting: ${cpu.remainingMs()}`);
  assert.ok(wall.remainingMs() <= 200, `wall clock did not run: ${wall.remainingMs()}`);
  const start = process.cpuUsage();
  for (;;) { // computing: 200 ms of CPU time
    const used = process.cpuUsage(start);
    if (used.user + used.system >= 200_000) break;
  }
  assert.ok(cpu.remainingMs() <= 300, `cpu clock did not run while computing: ${cpu.remainingMs()}`);
});
