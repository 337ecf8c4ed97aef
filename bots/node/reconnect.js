// The connection rules: which replica to try next, how long to wait, and
// which ends of a stream no retry can fix. Pure (no timers, no sockets), so
// the self-test checks every case; session.js applies them.
//
// A bot that drops off (its engine replica died or restarted) keeps its games
// only if it is back within the arena's grace period (Welcome.grace_ms, 10 s
// by default); after that they are forfeited. So the bot
//
//  - tries the NEXT address of its --address list after every failed or ended
//    connection (round robin): a replica that is gone for good is skipped and
//    the bot lands on a live one;
//  - waits 0.25 s, 0.5 s, 1 s, 2 s, 2 s, ... between attempts (each +-20% at
//    random, so the bots of a dead replica do not all come back in the same
//    millisecond). The 2 s cap keeps several attempts inside the grace period:
//    a replica that restarts after 7 s gets its bots back about 2 s later;
//  - starts that sequence over once a server welcomes it;
//  - reconnects at once when a draining server (shutting down on purpose)
//    ends its session, since the other replicas are ready now;
//  - waits longer when the server refuses it for a while: at least 5 s when
//    another session of the same bot is live (ALREADY_EXISTS), at least 1 s
//    when told to slow down (RESOURCE_EXHAUSTED), or the server's
//    retry-after-ms hint if that is longer;
//  - exits only when no retry can help: a bad, revoked or misnamed token, a
//    refused Hello, or an address that is not a bot gateway.
'use strict';

const grpc = require('@grpc/grpc-js');

const BACKOFF_START_MS = 250;
const BACKOFF_MAX_MS = 2000;
const BACKOFF_JITTER = 0.2; // +-20%

// Stream end codes that reconnecting cannot fix: the bot exits with the
// message. Every other code is retried (to the next address): the server is
// shutting down or unreachable (UNAVAILABLE), the connection broke (UNKNOWN,
// INTERNAL, DEADLINE_EXCEEDED), no Welcome came in time (CANCELLED by us), the
// server closed the stream cleanly (OK), or one of the refusals below.
const FATAL_HINTS = {
  [grpc.status.UNAUTHENTICATED]: 'the token is wrong, unknown or revoked; get a new one with `tablanette bot add NAME`',
  [grpc.status.PERMISSION_DENIED]: 'the token belongs to another bot name; pass the --name it was issued for',
  [grpc.status.INVALID_ARGUMENT]: 'the server refused our Hello',
  [grpc.status.UNIMPLEMENTED]: 'this address does not serve tablanette.v1.BotGateway',
};
// Refusals that are NOT the bot's fault and pass by themselves, so the bot
// waits at least this long (or the server's retry-after-ms hint, if longer)
// before trying again, instead of knocking every 0.25 s:
//  - ALREADY_EXISTS: a bot has one session at a time, and another session of
//    this bot is live (an old copy still running, or our own previous stream
//    the server has not seen end yet). It is refused until that one ends or
//    goes quiet; exiting would leave the bot offline for good once it does.
//  - RESOURCE_EXHAUSTED: slow down (too many Hellos or streams from this
//    address or for this token, too many messages, or we did not read our
//    stream and the server's queue for us filled up).
// ABORTED (this session had gone quiet and a newer one replaced it) is
// retried with the normal back-off: if the newer session is live, the next
// attempt is refused with ALREADY_EXISTS and waits as above.
const WAIT_AT_LEAST_MS = {
  [grpc.status.ALREADY_EXISTS]: 5000,
  [grpc.status.RESOURCE_EXHAUSTED]: 1000,
};
// A retry-after-ms hint is cut to this: a garbled header must not park the
// bot for days (and setTimeout fires at once past 2^31 - 1 ms).
const MAX_RETRY_AFTER_MS = 5 * 60 * 1000;

/**
 * Reconnect delays: 0.25 s, 0.5 s, 1 s, 2 s, 2 s, ... each with random jitter
 * (+-20%). reset() starts over at 0.25 s. `random` returns a number in [0, 1)
 * (tests pass their own).
 */
class Backoff {
  constructor({ startMs = BACKOFF_START_MS, maxMs = BACKOFF_MAX_MS, jitter = BACKOFF_JITTER, random = Math.random } = {}) {
    this.startMs = startMs;
    this.maxMs = maxMs;
    this.jitter = jitter;
    this.random = random;
    this.baseMs = startMs; // the next delay before jitter
  }

  /** The delay before the next attempt, in ms; the one after it is twice as long (up to maxMs). */
  next() {
    const base = this.baseMs;
    this.baseMs = Math.min(base * 2, this.maxMs);
    const factor = 1 + this.jitter * (2 * this.random() - 1); // 0.8 .. 1.2
    return Math.round(base * factor);
  }

  reset() {
    this.baseMs = this.startMs;
  }
}

/**
 * The replica list of --address / TABLANETTE_ADDRESS: "a:1, b:2" -> ['a:1', 'b:2'].
 * Spaces around the commas and empty entries are ignored; one address is a list of one.
 */
function parseAddresses(text) {
  return String(text || '')
    .split(',')
    .map((address) => address.trim())
    .filter((address) => address.length > 0);
}

/** The index of the address to try after `index` in a list of `count`: round robin. */
function nextAddressIndex(index, count) {
  return (index + 1) % count;
}

/** True when the server ended the stream because it is shutting down (draining). */
function isDraining(status) {
  return status.code === grpc.status.UNAVAILABLE && /shutting down/i.test(status.details || '');
}

/**
 * The server's suggested wait from a stream's trailing metadata
 * (`retry-after-ms`, whole milliseconds), capped at MAX_RETRY_AFTER_MS;
 * 0 when there is none or it is not a number.
 */
function retryAfterMs(metadata) {
  if (!metadata || typeof metadata.get !== 'function') return 0;
  const values = metadata.get('retry-after-ms');
  const text = String((values && values[0]) || '').trim();
  if (!/^\d+$/.test(text)) return 0;
  return Math.min(Number(text), MAX_RETRY_AFTER_MS);
}

/**
 * What to do when a stream ends with `status` ({code, details, metadata}, as
 * grpc-js reports it). Pure, so the self-test can check every code:
 *  - {fatal: true, exitCode, hint}: exit (2 for credentials, 1 otherwise);
 *  - {fatal: false, waitAtLeastMs, draining}: reconnect to the next address
 *    after max(back-off, waitAtLeastMs); at once if draining (and welcomed).
 */
function reconnectDecision(status) {
  const code = status.code;
  if (Object.prototype.hasOwnProperty.call(FATAL_HINTS, code)) {
    const credentials = code === grpc.status.UNAUTHENTICATED || code === grpc.status.PERMISSION_DENIED;
    return { fatal: true, exitCode: credentials ? 2 : 1, hint: FATAL_HINTS[code] };
  }
  // The hint counts whatever the code: the server knows best when to come back.
  const waitAtLeastMs = Math.max(WAIT_AT_LEAST_MS[code] || 0, retryAfterMs(status.metadata));
  return { fatal: false, waitAtLeastMs, draining: isDraining(status) };
}

/** A gRPC status code's name ("UNAVAILABLE"), for the log. */
function statusName(code) {
  return Object.keys(grpc.status).find((k) => grpc.status[k] === code) || String(code);
}

module.exports = {
  BACKOFF_JITTER,
  BACKOFF_MAX_MS,
  BACKOFF_START_MS,
  Backoff,
  MAX_RETRY_AFTER_MS,
  WAIT_AT_LEAST_MS,
  isDraining,
  nextAddressIndex,
  parseAddresses,
  reconnectDecision,
  retryAfterMs,
  statusName,
};
