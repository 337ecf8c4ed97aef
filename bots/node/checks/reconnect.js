// Checks of the connection rules (reconnect.js) and of the session applying
// them (session.js): round robin over the --address list, the back-off
// (0.25 s doubling to 2 s, +-20% jitter, reset by a Welcome), what each status
// code that ends the stream leads to: exit (bad token, refused Hello), or
// reconnect, waiting at least 5 s while another session of the bot is live
// (ALREADY_EXISTS) and 1 s when told to slow down (RESOURCE_EXHAUSTED), or the
// server's retry-after-ms if longer.
'use strict';

const assert = require('node:assert/strict');
const grpc = require('@grpc/grpc-js');

const {
  BACKOFF_JITTER,
  BACKOFF_MAX_MS,
  BACKOFF_START_MS,
  Backoff,
  MAX_RETRY_AFTER_MS,
  WAIT_AT_LEAST_MS,
  isDraining,
  nextAddressIndex,
  reconnectDecision,
  retryAfterMs,
} = require('../bot.js');
const { check, recordingBot, trailers } = require('./fixtures.js');

check('round robin: the next address after each failure, wrapping around', () => {
  assert.equal(nextAddressIndex(0, 1), 0); // one address: always the same one
  assert.equal(nextAddressIndex(0, 3), 1);
  assert.equal(nextAddressIndex(1, 3), 2);
  assert.equal(nextAddressIndex(2, 3), 0);
});

check('back-off: 0.25 s doubling to a 2 s cap, jitter within +-20%, reset()', () => {
  assert.deepEqual([BACKOFF_START_MS, BACKOFF_MAX_MS, BACKOFF_JITTER], [250, 2000, 0.2]);
  // random() = 0.5 is "no jitter": the bare sequence.
  const plain = new Backoff({ random: () => 0.5 });
  assert.deepEqual([1, 2, 3, 4, 5, 6].map(() => plain.next()), [250, 500, 1000, 2000, 2000, 2000]);
  plain.reset();
  assert.equal(plain.next(), 250);
  // The extremes of random() give -20% and (almost) +20%.
  const low = new Backoff({ random: () => 0 });
  assert.deepEqual([1, 2, 3, 4, 5].map(() => low.next()), [200, 400, 800, 1600, 1600]);
  const high = new Backoff({ random: () => 0.999999 });
  assert.deepEqual([1, 2, 3, 4, 5].map(() => high.next()), [300, 600, 1200, 2400, 2400]);
  // Math.random: every delay within +-20% of its step, and not all the same.
  const real = new Backoff();
  const seen = new Set();
  for (let round = 0; round < 200; round++) {
    if (round % 10 === 0) real.reset();
    const base = real.baseMs;
    const d = real.next();
    assert.ok(d >= base * 0.8 && d <= base * 1.2, `delay ${d} ms is not within 20% of ${base} ms`);
    assert.ok(d <= 2400);
    seen.add(d);
  }
  assert.ok(seen.size > 20, 'jitter varies the delays');
});

check('draining: UNAVAILABLE "server is shutting down" only', () => {
  assert.equal(isDraining({ code: grpc.status.UNAVAILABLE, details: 'server is shutting down; reconnect' }), true);
  assert.equal(isDraining({ code: grpc.status.UNAVAILABLE, details: 'Server is Shutting Down' }), true);
  assert.equal(isDraining({ code: grpc.status.UNAVAILABLE, details: 'No connection established' }), false);
  assert.equal(isDraining({ code: grpc.status.UNAVAILABLE }), false);
  assert.equal(isDraining({ code: grpc.status.ABORTED, details: 'shutting down' }), false);
});

check('refusals: retry-after-ms hint and the decision per status code', () => {
  assert.equal(retryAfterMs(trailers(7000)), 7000);
  assert.equal(retryAfterMs(trailers()), 0);
  assert.equal(retryAfterMs(undefined), 0);
  assert.equal(retryAfterMs(trailers('soon')), 0); // not a number: ignored
  assert.equal(retryAfterMs(trailers('-5')), 0);
  assert.equal(retryAfterMs(trailers(1e12)), MAX_RETRY_AFTER_MS); // absurd: capped
  assert.deepEqual([WAIT_AT_LEAST_MS[grpc.status.ALREADY_EXISTS], WAIT_AT_LEAST_MS[grpc.status.RESOURCE_EXHAUSTED]], [5000, 1000]);
  const decide = (code, details, retryAfter) => reconnectDecision({ code, details, metadata: trailers(retryAfter) });
  // Fatal: credentials exit 2, the other two exit 1.
  assert.deepEqual([decide(grpc.status.UNAUTHENTICATED).fatal, decide(grpc.status.UNAUTHENTICATED).exitCode], [true, 2]);
  assert.deepEqual([decide(grpc.status.PERMISSION_DENIED).fatal, decide(grpc.status.PERMISSION_DENIED).exitCode], [true, 2]);
  assert.deepEqual([decide(grpc.status.INVALID_ARGUMENT).fatal, decide(grpc.status.INVALID_ARGUMENT).exitCode], [true, 1]);
  assert.deepEqual([decide(grpc.status.UNIMPLEMENTED).fatal, decide(grpc.status.UNIMPLEMENTED).exitCode], [true, 1]);
  // Waits: the floor per code, or the hint when it is longer (never shorter than the floor).
  assert.deepEqual(decide(grpc.status.ALREADY_EXISTS, 'live'), { fatal: false, waitAtLeastMs: 5000, draining: false });
  assert.equal(decide(grpc.status.ALREADY_EXISTS, 'live', 8000).waitAtLeastMs, 8000);
  assert.equal(decide(grpc.status.ALREADY_EXISTS, 'live', 100).waitAtLeastMs, 5000);
  assert.equal(decide(grpc.status.RESOURCE_EXHAUSTED, 'slow').waitAtLeastMs, 1000);
  assert.equal(decide(grpc.status.RESOURCE_EXHAUSTED, 'slow', 2500).waitAtLeastMs, 2500);
  assert.equal(decide(grpc.status.RESOURCE_EXHAUSTED, 'slow', 10).waitAtLeastMs, 1000);
  // Everything else: the normal back-off (a hint still counts).
  for (const code of [grpc.status.ABORTED, grpc.status.UNAVAILABLE, grpc.status.CANCELLED, grpc.status.INTERNAL,
    grpc.status.UNKNOWN, grpc.status.DEADLINE_EXCEEDED, grpc.status.OK, grpc.status.NOT_FOUND,
    grpc.status.FAILED_PRECONDITION]) {
    assert.deepEqual(decide(code, 'x'), { fatal: false, waitAtLeastMs: 0, draining: false }, `code ${code}`);
  }
  assert.equal(decide(grpc.status.UNAVAILABLE, 'busy', 3000).waitAtLeastMs, 3000);
  assert.equal(decide(grpc.status.UNAVAILABLE, 'server is shutting down').draining, true);
});

/**
 * A welcomed recording bot on a replica list whose back-off has no jitter
 * (random 0.5: exact delays). It records every reconnect it schedules
 * ([address, delay], through a stand-in setTimeout that runs nothing) and
 * every fatal end ({code, message}, instead of exiting). `end` ends its
 * stream: one that was never welcomed, or with `welcomed` a session the last
 * Welcome started. close() puts the real setTimeout back.
 */
function reconnectingBot(addresses, name = 'n') {
  const s = recordingBot({ random: () => 0.5 }, { addresses, name, maxGames: 1 });
  const reconnects = [];
  const fatal = [];
  s.bot.onFatal = (code, message) => fatal.push({ code, message });
  const realSetTimeout = global.setTimeout;
  global.setTimeout = (fn, ms) => {
    reconnects.push([s.bot.address, ms]);
    return { ref() {}, unref() {} };
  };
  const end = (code, details, { retryAfter, welcomed = false } = {}) => {
    if (!welcomed) s.bot.welcomed = false;
    s.bot.onStreamEnd({ code, details, metadata: trailers(retryAfter) });
  };
  const close = () => {
    global.setTimeout = realSetTimeout;
    s.close();
  };
  return { ...s, reconnects, fatal, end, close };
}

check('session: reconnects round robin with back-off, reset on Welcome, at once after a drain; fatal codes exit', () => {
  const s = reconnectingBot(['a:1', 'b:2', 'c:3']);
  const { reconnects, fatal, end } = s;
  try {
    assert.equal(s.bot.address, 'a:1'); // the first address first
    // Replicas unreachable: every attempt goes to the next address, delays double to 2 s.
    for (let i = 0; i < 6; i++) end(grpc.status.UNAVAILABLE, 'No connection established');
    assert.deepEqual(reconnects, [['b:2', 250], ['c:3', 500], ['a:1', 1000], ['b:2', 2000], ['c:3', 2000], ['a:1', 2000]]);
    assert.match(s.logs.at(-1), /^stream ended before Welcome \(UNAVAILABLE: No connection established\); reconnecting to a:1 in 2\.00 s$/);
    // Welcomed on a:1, then the replica dies: b:2 after 0.25 s again.
    s.welcome();
    end(grpc.status.UNAVAILABLE, 'Connection dropped', { welcomed: true });
    assert.deepEqual(reconnects.at(-1), ['b:2', 250]);
    // Other broken-transport codes are retried the same way.
    end(grpc.status.INTERNAL, 'Received RST_STREAM');
    end(grpc.status.DEADLINE_EXCEEDED, '');
    assert.deepEqual(reconnects.slice(-2), [['c:3', 500], ['a:1', 1000]]);
    // Welcomed on a:1, then it drains: straight to b:2, no delay, back-off untouched.
    s.welcome();
    end(grpc.status.UNAVAILABLE, 'server is shutting down; reconnect', { welcomed: true });
    assert.deepEqual(reconnects.at(-1), ['b:2', 0]);
    // b:2 is draining too and refuses us before a Welcome: the usual delay, next address.
    end(grpc.status.UNAVAILABLE, 'server is shutting down; connect to another replica');
    assert.deepEqual(reconnects.at(-1), ['c:3', 250]);
    const count = reconnects.length;
    end(grpc.status.UNAUTHENTICATED, 'bad token');
    assert.equal(fatal.at(-1).code, 2);
    assert.match(fatal.at(-1).message, /UNAUTHENTICATED: bad token -- the token is wrong/);
    end(grpc.status.PERMISSION_DENIED, 'other bot');
    assert.equal(fatal.at(-1).code, 2);
    end(grpc.status.INVALID_ARGUMENT, 'no Hello');
    assert.deepEqual([fatal.at(-1).code, /refused our Hello/.test(fatal.at(-1).message)], [1, true]);
    end(grpc.status.UNIMPLEMENTED, '');
    assert.deepEqual([fatal.at(-1).code, /does not serve/.test(fatal.at(-1).message)], [1, true]);
    assert.equal(reconnects.length, count); // no reconnect scheduled for fatal codes
    // A revoked token closes the live session: still fatal.
    s.welcome();
    end(grpc.status.UNAUTHENTICATED, "this bot's token was revoked", { welcomed: true });
    assert.equal(fatal.length, 5);
    assert.equal(fatal.at(-1).code, 2);
    assert.match(fatal.at(-1).message, /token was revoked -- the token is wrong, unknown or revoked/);
    assert.equal(reconnects.length, count);
  } finally {
    s.close();
  }
});

check('session: ABORTED, ALREADY_EXISTS and RESOURCE_EXHAUSTED reconnect (and wait), never exit', () => {
  const s = reconnectingBot(['a:1', 'b:2'], 'my-bot');
  const { reconnects, fatal, end } = s;
  const refused = (code, details, retryAfter) => end(code, details, { retryAfter });
  try {
    // Our quiet session was replaced by a newer one: reconnect with the normal back-off (reset by the Welcome).
    end(grpc.status.ABORTED, 'replaced by a newer session', { welcomed: true });
    assert.deepEqual(reconnects.at(-1), ['b:2', 250]);
    assert.match(s.logs.at(-1), /^stream ended \(ABORTED: replaced by a newer session\); reconnecting to b:2 in 0\.25 s$/);
    // The newer session is live: refused with ALREADY_EXISTS, wait at least 5 s, keep going round robin.
    refused(grpc.status.ALREADY_EXISTS, 'bot is connected already', 5000);
    assert.deepEqual(reconnects.at(-1), ['a:1', 5000]);
    assert.match(s.logs.at(-1), /^another session of my-bot is live; retrying a:1 in 5\.0 s \(ALREADY_EXISTS: bot is connected already\)$/);
    // Without a hint: still 5 s. A longer hint wins.
    refused(grpc.status.ALREADY_EXISTS, 'bot is connected already');
    assert.deepEqual(reconnects.at(-1), ['b:2', 5000]);
    refused(grpc.status.ALREADY_EXISTS, 'bot is connected already', 12000);
    assert.deepEqual(reconnects.at(-1), ['a:1', 12000]);
    assert.match(s.logs.at(-1), /retrying a:1 in 12\.0 s/);
    // Slow down: at least 1 s, or the hint. The back-off (now at 2 s) still counts when it is longer.
    s.bot.backoff = new Backoff({ random: () => 0.5 }); // from 0.25 s again, to see where it overtakes the floor
    refused(grpc.status.RESOURCE_EXHAUSTED, 'more than 20 Hellos per second; retry in 40 ms', 40);
    assert.deepEqual(reconnects.at(-1), ['b:2', 1000]);
    assert.match(s.logs.at(-1), /^the server asks my-bot to slow down; retrying b:2 in 1\.0 s \(RESOURCE_EXHAUSTED: /);
    refused(grpc.status.RESOURCE_EXHAUSTED, 'this token says Hello too often', 3500);
    assert.deepEqual(reconnects.at(-1), ['a:1', 3500]);
    refused(grpc.status.RESOURCE_EXHAUSTED, 'the bot does not read its stream');
    assert.deepEqual(reconnects.at(-1), ['b:2', 1000]);
    refused(grpc.status.RESOURCE_EXHAUSTED, 'the bot does not read its stream');
    assert.deepEqual(reconnects.at(-1), ['a:1', 2000]); // back-off 0.25, 0.5, 1, 2: 2 s beats the 1 s floor
    // Welcomed at last: the back-off starts over.
    s.welcome();
    end(grpc.status.UNAVAILABLE, 'Connection dropped', { welcomed: true });
    assert.deepEqual(reconnects.at(-1), ['b:2', 250]);
    assert.deepEqual(fatal, []); // none of these ever exits
    assert.equal(reconnects.length, 9);
  } finally {
    s.close();
  }
});
