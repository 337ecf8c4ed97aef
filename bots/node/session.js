// The gRPC client session: ONE bidirectional stream
// (tablanette.v1.BotGateway/Connect) at a time. It says Hello, waits for the
// Welcome, keeps the stream alive, answers the server's pings, hands the game
// messages to games.js, and when the stream ends reconnects by the rules of
// reconnect.js (or exits when no retry can help).
'use strict';

const fs = require('node:fs');

const grpc = require('@grpc/grpc-js');

const { Games } = require('./games.js');
const { FEATURES, PACKAGE, loadProtos, versionLabel } = require('./protocol.js');
const { BACKOFF_MAX_MS, BACKOFF_START_MS, Backoff, nextAddressIndex, parseAddresses, reconnectDecision, statusName } =
  require('./reconnect.js');
const { chooseIndex } = require('./strategy.js');

// A server that accepts the connection but never says Welcome (or a host that
// is gone and silently drops packets, so connecting neither fails nor
// succeeds): give up on it after this long and try the next address.
const WELCOME_TIMEOUT_MS = 3000;
const DEFAULT_KEEPALIVE_MS = 10000;

/** The default logger: one timestamped line on stderr. */
function log(msg) {
  process.stderr.write(`${new Date().toISOString()} ${msg}\n`);
}

class ArenaBot {
  /**
   * @param {object} opts  what parseOptions returns: {addresses, token, name,
   *   maxGames, tls, ca, version}; `address: 'host:port[,host:port...]'` may
   *   stand in for `addresses`, and `version` defaults to versionLabel().
   */
  constructor(opts, { v1, logger = log, choose = chooseIndex, newGame = null, random = Math.random } = {}) {
    this.opts = opts;
    this.log = logger;
    this.v1 = v1 || loadProtos().v1;
    this.addresses = opts.addresses || parseAddresses(opts.address);
    if (this.addresses.length === 0) throw new Error('no address to connect to');
    this.addressIndex = 0; // the replica the next (or current) connection goes to
    this.version = opts.version || versionLabel();
    // The games being played. Each game's choose: its own from newGame (per-game state), or the shared one.
    this.play = new Games({ newGame: newGame || (() => choose), send: (m) => this.send(m), log: (m) => this.log(m) });
    this.call = null;
    this.generation = 0;
    this.backoff = new Backoff({ random });
    this.reconnectTimer = null;
    this.welcomeTimer = null;
    this.keepaliveTimer = null;
    this.stopping = false;
    this.onFatal = (code, message) => {
      this.log(`fatal: ${message}`);
      this.stop(code);
    };
    this.onExit = (code) => process.exit(code);
    this.client = this.newClient();
  }

  /** The address the next (or current) connection goes to. */
  get address() {
    return this.addresses[this.addressIndex];
  }

  /** game_id -> that game's state (games.js). */
  get games() {
    return this.play.games;
  }

  /** Games played, won, lost, drawn, and strategy failures (chooseErrors). */
  get stats() {
    return this.play.stats;
  }

  // A fresh channel for every connection attempt: it resolves the address
  // again (a restarted or different replica) and dials at once, so our own
  // backoff below is the only one (grpc-js channels otherwise keep their own
  // reconnect backoff, which grows to two minutes).
  newClient() {
    return new this.v1.BotGateway(this.address, this.credentials(), {
      'grpc.primary_user_agent': `${PACKAGE.name}/${PACKAGE.version}`,
      'grpc.use_local_subchannel_pool': 1,
      'grpc.initial_reconnect_backoff_ms': BACKOFF_START_MS,
      'grpc.max_reconnect_backoff_ms': BACKOFF_MAX_MS,
    });
  }

  credentials() {
    if (!this.opts.tls) return grpc.credentials.createInsecure();
    let ca = null;
    if (this.opts.ca) {
      try {
        ca = fs.readFileSync(this.opts.ca);
      } catch (err) {
        throw new Error(`cannot read the CA certificate --ca ${this.opts.ca}: ${err.code || err.message}`);
      }
    }
    return grpc.credentials.createSsl(ca);
  }

  start() {
    this.connect();
  }

  connect() {
    this.reconnectTimer = null;
    if (this.stopping) return;
    const gen = ++this.generation;
    if (gen > 1) {
      this.client.close();
      this.client = this.newClient();
    }
    this.welcomed = false;
    const address = this.address;
    this.log(`connecting to ${address} as ${this.opts.name}${this.opts.tls ? ' (TLS)' : ''}`);
    const call = this.client.Connect();
    this.call = call;
    // No Welcome in time: cancel; the stream then ends (CANCELLED) and
    // onStreamEnd moves on to the next address.
    clearTimeout(this.welcomeTimer);
    this.welcomeTimer = setTimeout(() => {
      if (gen !== this.generation || this.welcomed) return;
      this.log(`no Welcome from ${address} within ${WELCOME_TIMEOUT_MS / 1000} s; giving up on it`);
      call.cancel();
    }, WELCOME_TIMEOUT_MS);
    call.on('data', (msg) => {
      if (gen === this.generation) this.onMessage(msg);
    });
    // grpc-js emits 'error' (non-OK status) and then 'status' (always): all
    // end-of-stream handling happens once, in onStreamEnd.
    call.on('error', () => {});
    call.on('status', (status) => {
      if (gen === this.generation) this.onStreamEnd(status);
    });
    this.send({
      hello: {
        token: this.opts.token,
        bot_name: this.opts.name,
        version: this.version,
        max_games: this.opts.maxGames,
        features: FEATURES,
      },
    });
  }

  send(message) {
    const call = this.call;
    if (!call || call.destroyed || call.writableEnded) return false;
    try {
      call.write(message);
      return true;
    } catch (err) {
      this.log(`write failed: ${err.message}`);
      return false;
    }
  }

  onMessage(msg) {
    switch (msg.kind) {
      case 'welcome':
        return this.onWelcome(msg.welcome);
      case 'game_started':
        return this.play.onGameStarted(msg.game_started);
      case 'turn':
        return this.play.onTurn(msg.turn);
      case 'play_rejected':
        return this.play.onPlayRejected(msg.play_rejected);
      case 'game_over':
        return this.play.onGameOver(msg.game_over);
      case 'keepalive':
        // A server's ping: echo it at once (the arena times the round trip, and a league that credits
        // latency does not charge it to this bot's clock). Our own timer keeps the stream alive.
        if (msg.keepalive.echo && msg.keepalive.echo !== '0') {
          this.send({ keepalive: { unix_ms: String(Date.now()), echo: msg.keepalive.echo } });
        }
        return undefined;
      default:
        this.log(`ignoring unknown server message ${JSON.stringify(msg.kind)}`);
        return undefined;
    }
  }

  onWelcome(w) {
    this.welcomed = true;
    clearTimeout(this.welcomeTimer);
    this.backoff.reset(); // a server took us: the next reconnect starts at 0.25 s again
    const keepaliveMs = w.keepalive_ms > 0 ? w.keepalive_ms : DEFAULT_KEEPALIVE_MS;
    this.log(
      `welcome from ${this.address}: bot ${w.bot_name || this.opts.name}, session ${w.session_id}, ` +
        `server ${w.server_version || '?'}, ` +
        `keepalive ${keepaliveMs} ms, grace ${w.grace_ms} ms, max_games ${this.opts.maxGames}`,
    );
    clearInterval(this.keepaliveTimer);
    // Send well within the server's interval so one slow tick never misses it.
    const every = Math.max(100, Math.floor(keepaliveMs / 2));
    this.keepaliveTimer = setInterval(() => this.send({ keepalive: { unix_ms: String(Date.now()) } }), every);
    this.keepaliveTimer.unref();
  }

  onStreamEnd(status) {
    this.call = null;
    clearTimeout(this.welcomeTimer);
    clearInterval(this.keepaliveTimer);
    this.keepaliveTimer = null;
    if (this.stopping) return;
    const code = status.code;
    const name = statusName(code);
    const details = status.details ? `: ${status.details}` : '';
    const decision = reconnectDecision(status);
    if (decision.fatal) {
      this.onFatal(decision.exitCode, `${name}${details} -- ${decision.hint}`);
      return;
    }
    // Retry on the next replica of the list (the same one if there is only one).
    this.addressIndex = nextAddressIndex(this.addressIndex, this.addresses.length);
    // A draining server ended our live session: the others are ready, go now.
    // (A draining server that refused a new connection gets the usual delay,
    // so a bot with a single address does not hammer it.)
    const backoffMs = decision.draining && this.welcomed ? 0 : this.backoff.next();
    const delay = Math.max(backoffMs, decision.waitAtLeastMs);
    // One line that says why the bot waits, so a long pause is not a mystery.
    const retrying = `retrying ${this.address} in ${(delay / 1000).toFixed(1)} s (${name}${details})`;
    if (code === grpc.status.ALREADY_EXISTS) {
      this.log(`another session of ${this.opts.name} is live; ${retrying}`);
    } else if (code === grpc.status.RESOURCE_EXHAUSTED) {
      this.log(`the server asks ${this.opts.name} to slow down; ${retrying}`);
    } else {
      const when = this.welcomed ? '' : ' before Welcome';
      this.log(
        `stream ended${when} (${name}${details}); reconnecting to ${this.address} in ${(delay / 1000).toFixed(2)} s`,
      );
    }
    this.reconnectTimer = setTimeout(() => this.connect(), delay);
  }

  stop(exitCode = 0) {
    if (this.stopping) return;
    this.stopping = true;
    clearTimeout(this.reconnectTimer);
    clearTimeout(this.welcomeTimer);
    clearInterval(this.keepaliveTimer);
    const call = this.call;
    this.call = null;
    if (call) {
      try {
        call.end(); // half-close: we send no more
      } catch (_) {
        /* already closed */
      }
      call.cancel();
    }
    this.client.close();
    this.onExit(exitCode);
  }
}

module.exports = { ArenaBot, WELCOME_TIMEOUT_MS, log };
