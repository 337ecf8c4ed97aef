// The games a bot is playing: each game's state, and the bot contract, which
// says what a strategy is handed and when. session.js feeds it the game
// messages of the stream and sends what it answers.
//
// The bot contract:
//
// - `choose(legalPlays, rules, table, exclude, observation, clock)` returns an
//   index into legalPlays, or a Promise of one. A slow strategy should think
//   asynchronously (await a worker_threads Worker, a child process, a Rules
//   service call, or yield with `await setImmediate()` between chunks of
//   work): turns of other games are then answered meanwhile. A synchronous
//   choose holds up the whole event loop, and so every game, while it runs.
// - `clock.remainingMs()` is the time left for this turn, measured on this
//   machine's monotonic clock from Turn.time_left_ms (the network's share of
//   the way back is not taken off, unless the league credits latency: keep a
//   margin). `clock.bankMs` is the part of it that is the bot's time bank for
//   the rest of the match (Turn.time_bank_ms): plan on remainingMs() - bankMs
//   to keep the reserve. On a CLOCK_CPU turn (a
//   hosted bot in a league on the CPU clock) it is the CPU time left, counted
//   with process.cpuUsage(), as the arena counts the sandbox's CPU time.
// - Per-game state: pass `newGame` instead of `choose`. It is called once per
//   game, when the game starts (or at its first Turn if GameStarted was
//   missed, e.g. after a reconnect; `rules` is then null), with
//   {gameId, rules, seat, teams, players}, and returns that game's `choose`.
// - Calls for one game never overlap: a game's next turn waits until its
//   previous choose has settled. Calls for different games do overlap.
// - If choose throws, rejects or returns something that is not an untried
//   index, the bot answers the first untried legal play (on a first try that
//   is legal_plays[0], the engine's own timeout play) and logs why: a bug
//   costs a move, never the connection.
'use strict';

const { performance } = require('node:perf_hooks');

const { unpackTurn } = require('./protocol.js');
const { DEFAULT_RULES } = require('./rules.js');

// A game not heard of for this long is forgotten (its GameOver never came).
const STALE_GAME_MS = 60 * 60 * 1000;

/** The time left for one turn, from Turn.time_left_ms: on the monotonic clock, or (cpu) this process's CPU time. */
class Clock {
  constructor(timeLeftMs, receivedAt = performance.now(), cpu = false, bankMs = 0) {
    this.budget = Math.max(Number(timeLeftMs) || 0, 0);
    this.bankMs = Math.min(Math.max(Number(bankMs) || 0, 0), this.budget);
    this.deadline = receivedAt + this.budget;
    this.cpuStart = cpu ? process.cpuUsage() : null;
  }

  /** Milliseconds left before this turn's deadline (0 once it has passed). */
  remainingMs() {
    if (this.cpuStart) {
      const used = process.cpuUsage(this.cpuStart);
      return Math.max(0, this.budget - (used.user + used.system) / 1000);
    }
    return Math.max(0, this.deadline - performance.now());
  }
}

/** The time a turn gives: Turn.time_left_ms, else (an older server) what deadline_unix_ms leaves. */
function turnTimeMs(turn) {
  const left = Number(turn.time_left_ms) || 0;
  if (left > 0) return left;
  const deadline = Number(turn.deadline_unix_ms) || 0;
  return deadline > 0 ? Math.max(0, deadline - Date.now()) : 0;
}

/** Our outcome of a finished game: 'won', 'lost', 'draw', or '?' when our team is unknown. */
function outcomeOf(g, seat, result) {
  // Our team: from GameStarted.teams; else seat % number of teams, which is
  // what both team layouts ([[0], [1], ...] and [[0, 2], [1, 3]]) give.
  let team = (g.teams || []).findIndex((seats) => seats.includes(seat));
  if (team < 0 && (result.score || []).length > 0) team = seat % result.score.length;
  if (team < 0) team = g.team;
  if (result.winner === -1) return 'draw';
  if (team >= 0) return result.winner === team ? 'won' : 'lost';
  return '?';
}

class Games {
  /**
   * @param {object} io
   * @param {function} io.newGame  game -> that game's choose (see the bot contract above)
   * @param {function} io.send     writes a BotMessage on the stream
   * @param {function} io.log      one line for the log
   */
  constructor({ newGame, send, log }) {
    this.newGame = newGame;
    this.send = send;
    this.log = log;
    this.games = new Map(); // game_id -> {choose, rules, seat, teams, team, turn, turns, rejects, queue}
    this.stats = { games: 0, won: 0, lost: 0, drawn: 0, chooseErrors: 0 };
  }

  game(gameId) {
    let g = this.games.get(gameId);
    if (!g) {
      this.forgetStaleGames();
      g = { choose: null, rules: null, seat: -1, teams: [], team: -1, turn: null, turns: 0, rejects: 0 };
      g.queue = Promise.resolve(); // this game's answers, one after the other
      this.games.set(gameId, g);
    }
    g.lastSeen = Date.now();
    return g;
  }

  // A game whose GameOver never reached us (say it was forfeited while we
  // were disconnected) would otherwise stay in memory forever.
  forgetStaleGames(maxIdleMs = STALE_GAME_MS) {
    const now = Date.now();
    for (const [id, g] of this.games) {
      if (now - g.lastSeen > maxIdleMs) this.games.delete(id);
    }
  }

  onGameStarted(gs) {
    const g = this.game(gs.game_id);
    g.rules = gs.rules || null;
    g.seat = gs.seat;
    g.teams = (gs.teams || []).map((t) => t.seats || []);
    g.players = gs.players || [];
    const team = g.teams.findIndex((seats) => seats.includes(gs.seat));
    if (team >= 0) g.team = team;
    this.strategyFor(gs.game_id, g);
  }

  /** The game's choose, made by newGame the first time the game is seen. */
  strategyFor(gameId, g) {
    if (!g.choose) {
      const game = { gameId, rules: g.rules, seat: g.seat, teams: g.teams, players: g.players || [] };
      try {
        g.choose = this.newGame(game);
      } catch (err) {
        this.log(`game ${gameId}: newGame failed (${err.message}); this game plays the first legal play`);
      }
      if (typeof g.choose !== 'function') g.choose = () => 0;
    }
    return g.choose;
  }

  onTurn(packedOrNamed) {
    let turn;
    try {
      turn = unpackTurn(packedOrNamed);
    } catch (err) {
      this.log(`game ${packedOrNamed.game_id} turn ${packedOrNamed.turn_id}: unreadable turn (${err.message}); not answering`);
      return;
    }
    const g = this.game(turn.game_id);
    const obs = turn.observation || {};
    if (!g.rules && !g.warnedNoRules) {
      g.warnedNoRules = true;
      this.log(`game ${turn.game_id}: turn without GameStarted (reconnect?); playing with default ${DEFAULT_RULES.preset} rules`);
    }
    if (g.seat < 0) g.seat = obs.seat;
    if (g.team < 0 && obs.team !== undefined) g.team = obs.team;
    g.turn = {
      turn_id: turn.turn_id, // int64 as a decimal string: echoed back unchanged
      legal_plays: turn.legal_plays || [],
      table: obs.table || [],
      observation: obs,
      deadline: Number(turn.deadline_unix_ms) || 0,
      clock: new Clock(turnTimeMs(turn), performance.now(), turn.clock === 'CLOCK_CPU', turn.time_bank_ms),
      tried: new Set(),
    };
    g.turns += 1;
    this.answer(turn.game_id, g);
  }

  /**
   * Answers the game's current turn once its previous answer has settled;
   * returns the promise of this answer (the tests wait on it).
   */
  answer(gameId, g) {
    const t = g.turn;
    // think() catches the strategy's errors; this catch keeps the chain going whatever else fails
    g.queue = g.queue.then(() => this.think(gameId, g, t)).catch((err) => this.log(`game ${gameId}: ${err && err.message}`));
    return g.queue;
  }

  async think(gameId, g, t) {
    if (g.turn !== t || this.games.get(gameId) !== g) return; // a newer turn, or the game is over
    const index = await this.decide(gameId, g, t);
    if (g.turn !== t || this.games.get(gameId) !== g) {
      this.log(`game ${gameId} turn ${t.turn_id}: decided after the game moved on; answer dropped`);
      return;
    }
    if (index < 0) {
      this.log(`game ${gameId} turn ${t.turn_id}: no legal play left to send`);
      return;
    }
    t.tried.add(index);
    if (t.deadline && Date.now() > t.deadline) {
      this.log(`game ${gameId} turn ${t.turn_id}: answering after the deadline`);
    }
    this.send({ play: { game_id: gameId, turn_id: t.turn_id, index } });
  }

  /** The strategy's index for turn t; if it fails, the first untried legal play (-1 if none is left). */
  async decide(gameId, g, t) {
    const choose = this.strategyFor(gameId, g);
    try {
      const index = await choose(t.legal_plays, g.rules, t.table, t.tried, t.observation, t.clock);
      if (!Number.isInteger(index) || index < 0 || index >= t.legal_plays.length || t.tried.has(index)) {
        throw new Error(`it chose ${JSON.stringify(index)}, not an untried index into ${t.legal_plays.length} legal plays`);
      }
      return index;
    } catch (err) {
      this.stats.chooseErrors += 1;
      const index = t.legal_plays.findIndex((_, i) => !t.tried.has(i));
      this.log(`game ${gameId} turn ${t.turn_id}: strategy failed (${err && err.message}); playing legal play ${index}`);
      return index;
    }
  }

  onPlayRejected(rej) {
    const g = this.games.get(rej.game_id);
    this.log(`game ${rej.game_id} turn ${rej.turn_id}: play rejected: ${rej.reason}`);
    if (!g || !g.turn || String(g.turn.turn_id) !== String(rej.turn_id)) return;
    g.rejects += 1;
    if (g.turn.deadline && Date.now() >= g.turn.deadline) return;
    this.answer(rej.game_id, g); // the next best play not tried yet
  }

  onGameOver(over) {
    const g = this.games.get(over.game_id) || { teams: [], team: -1, turns: 0, rejects: 0 };
    this.games.delete(over.game_id);
    const r = over.result || {};
    const seat = over.seat;
    const outcome = outcomeOf(g, seat, r);
    this.stats.games += 1;
    if (outcome === 'won') this.stats.won += 1;
    else if (outcome === 'lost') this.stats.lost += 1;
    else if (outcome === 'draw') this.stats.drawn += 1;
    const forfeit = r.reason === 'forfeit' ? ` (seat ${r.forfeit_seat} forfeited)` : '';
    this.log(
      `game over ${over.game_id}: ${outcome}, seat ${seat}, winner team ${r.winner}, ` +
        `score ${(r.score || []).join('-')}, reason ${r.reason}${forfeit}, turns ${g.turns}, ` +
        `rejected ${g.rejects}, record ${over.record_id || '-'} ` +
        `[total ${this.stats.games}: ${this.stats.won}W ${this.stats.lost}L ${this.stats.drawn}D]`,
    );
  }
}

module.exports = { Clock, Games, STALE_GAME_MS, turnTimeMs };
