/* A league: live tournament progress, the Elo ladder (sortable), the crosstable and recent matches. */
"use strict";

(() => {
  const { el, clear, urls, num } = TA;
  TA.header("leagues");

  const parts = TA.pathParts(); // ["leagues", id]
  const leagueId = parts[1] || "";
  const api = (p) => urls.api(`/leagues/${encodeURIComponent(leagueId)}${p}`);
  const POLL_MS = 2000;
  const LIVE = ["running", "waiting", "paused"]; // statuses of a league that is still being fed
  const PAGE = 20;
  const LADDER_PAGE = 100; // ladder rows fetched at a time: a league of thousands of bots stays quick
  const LOS_TOP = 30; // bots in the "how sure" matrix (it grows as the square)
  let ladderRows = [];

  let summary = null;
  let ladderTable = null;
  let lastCounts = null;
  let pollTimer = null;
  let matchesShown = [];

  document.title = `${leagueId} · Tablanette Arena`;
  document.getElementById("league-name").textContent = leagueId;
  document.getElementById("crumbs").append(TA.crumbs([["Leagues", urls.home()], [leagueId, null]]));

  // ------------------------------------------------------------------ summary and progress

  function rulesText(rules) {
    const extra = Object.entries(rules)
      .filter(([k]) => k !== "preset")
      .map(([k, v]) => `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`);
    return rules.preset + (extra.length ? ` (${extra.join(", ")})` : "");
  }

  function clockText(s) {
    const parts = [s.clock === "cpu" ? `CPU time (hosted bots; wall cap ${num(s.wall_cap_ms / 1000, 1)} s)` : "wall"];
    if (s.latency_credit_ms) parts.push(`round trip credited up to ${num(s.latency_credit_ms / 1000, 2)} s`);
    if (s.time_bank_ms) parts.push(`time bank ${num(s.time_bank_ms / 1000, 1)} s a match`);
    return parts.join("; ");
  }

  function renderFacts(s) {
    const facts = document.getElementById("facts");
    const fact = (label, value) => el("span", null, `${label} `, el("b", { text: value }));
    clear(facts).append(
      fact("rules", rulesText(s.rules)),
      fact("players", s.players + (s.teams && s.teams.some((t) => t.length > 1) ? " (partnerships)" : "")),
      fact("format", s.format),
      fact("games per pairing", s.games_per_pairing),
      fact("clock", clockText(s)),
      fact("bots", s.bots.length),
      fact("Elo K", num(s.k)),
      fact("initial", num(s.initial)),
    );
    const status = document.getElementById("league-status");
    clear(status).append(TA.badge(s.progress.status));
    renderDeals(s.deals);
    renderLuck(s.luck_correction, s.fit);
  }

  /** How much of the cards' luck the skill fit takes out (a coefficient fitted on this league's results) and the
      spread of margins that leaves, against taking the whole of it. Aggregates only. */
  function renderLuck(c, fit) {
    const host = document.getElementById("luck-correction");
    if (!host) return;
    if (!c || !c.units) {
      clear(host);
      return;
    }
    const range = c.pairing_betas && c.pairing_betas[0] !== c.pairing_betas[1] ? `, ${num(c.pairing_betas[0], 2)}–${num(c.pairing_betas[1], 2)} by pairing` : "";
    const ratio = c.ratio === null || c.ratio === undefined ? "" : `; variance of margins adjusted/raw ${num(c.ratio, 2)} (taking the whole luck: ${num(c.ratio_at_one, 2)})`;
    clear(host).append(
      el("p", {
        "data-testid": "luck-correction",
        title: "Skill = margin − coefficient × luck. The coefficient is fitted on this league's own results (each match's from the other folds of its units, so it stays unbiased; near 1 while the results are few); below 1 where the luck estimate overrates the cards for these bots.",
      },
      "Luck correction: ", el("b", { text: `coefficient ${num(c.beta, 2)}${range}` }), ` from ${c.units} units${ratio}.`,
      fit === "skill" ? "" : " (Used by a ladder on skill; this one is on wins and losses.)"),
    );
  }

  /** How the league deals: secret or public, mirrored or not, and the second-sight check where deals are shared. */
  function renderDeals(d) {
    const host = document.getElementById("deals");
    if (!host || !d) return;
    const lines = [
      el("p", { "data-testid": "deals-mode" }, "Deals: ", el("b", { text: `${d.dealt}${d.decided ? "" : " (decided when the league starts)"}, ${d.secret ? "secret" : "public"}` }),
        d.dealt === "mirrored" ? " — the games of a deal are shown once all of them are over." : ""),
    ];
    if (d.public) lines.push(el("p", { class: "warning", "data-testid": "deals-public", text: `These deals are public: ${d.public}.` }));
    if (d.warning) lines.push(el("p", { class: "warning", "data-testid": "deals-warning", text: `Warning: ${d.warning}.` }));
    if (d.second_sight.length) {
      lines.push(el("table", { "data-testid": "second-sight" },
        el("thead", null, el("tr", null, ["bot", "advantage on a deal seen before (points, 95% interval)", "deals", ""].map((h) => el("th", { text: h })))),
        el("tbody", null, d.second_sight.map((r) => el("tr", null,
          el("td", { text: r.bot }),
          el("td", { class: "num", text: TA.signed(r.advantage, 1) + (r.interval ? ` (${TA.signed(r.interval[0], 1)}…${TA.signed(r.interval[1], 1)})` : "") }),
          el("td", { class: "num", text: r.deals }),
          el("td", { class: r.flagged ? "warning" : "muted", text: r.flagged ? "flagged" : "" }),
        ))),
      ));
    }
    clear(host).append(...lines);
  }

  function count(label, value, testid, cls) {
    return el(
      "div",
      { class: "count" + (cls ? ` ${cls}` : "") },
      el("div", { class: "label", text: label }),
      el("div", { class: "value", "data-testid": testid, text: value }),
    );
  }

  function renderProgress(p, standing) {
    const host = document.getElementById("tournament");
    const running = LIVE.includes(p.status);
    document.getElementById("tournament-h").firstChild.textContent = standing ? "Play " : "Tournament ";
    if (standing) {
      // a ladder that never ends: no total, no bar, no ETA; what it played and what it has planned
      clear(host).append(
        el(
          "div",
          { "data-testid": "progress", "data-status": p.status, "data-done": p.done, "data-total": p.total, "data-failed": p.failed },
          el(
            "div",
            { class: "frame-line" },
            el("div", { class: "frame-counter", "data-testid": "progress-text" }, `${p.done} matches played; it plays on, with no end`),
            el("div", { class: "muted small", text: p.matches_per_second ? `${num(p.matches_per_second, 2)} matches/s` : "" }),
          ),
          el(
            "div",
            { class: "counts" },
            count("played", p.done, "progress-done"),
            count("running", p.running, "progress-running"),
            count("planned", p.queued, "progress-queued"),
            count("failed", p.failed, "progress-failed", p.failed ? "alert" : null),
          ),
        ),
      );
    } else {
      renderEventProgress(host, p);
    }
    renderFlags(host, p, running);
  }

  function renderEventProgress(host, p) {
    let eta = "–";
    if (p.status === "finished") eta = "done";
    else if (p.status === "running" && p.eta_seconds !== null && p.eta_seconds !== undefined) eta = TA.duration(p.eta_seconds);
    else if (p.status === "running") eta = "estimating…";
    const pct = p.total ? Math.floor((100 * p.done) / p.total) : 0; // failed matches are not done: never a false 100%
    clear(host).append(
      el(
        "div",
        {
          "data-testid": "progress",
          "data-status": p.status,
          "data-done": p.done,
          "data-total": p.total,
          "data-failed": p.failed,
        },
        el(
          "div",
          { class: "frame-line" },
          el(
            "div",
            { class: "frame-counter", "data-testid": "progress-text" },
            `${p.done} / ${p.total} matches done` + (p.failed ? ` · ${p.failed} failed` : ""),
          ),
          el("div", { class: "muted small", text: `${pct}%` + (p.matches_per_second ? ` · ${num(p.matches_per_second, 2)} matches/s` : "") }),
        ),
        TA.progressBar(p),
        el(
          "div",
          { class: "counts" },
          count("done", p.done, "progress-done"),
          count("total", p.total, "progress-total"),
          count("running", p.running, "progress-running"),
          count("queued", p.queued, "progress-queued"),
          count("failed", p.failed, "progress-failed", p.failed ? "alert" : null),
          count("ETA", eta, "progress-eta"),
        ),
      ),
    );
  }

  function renderFlags(host, p, running) {
    const absent = Object.keys(p.absent || {});
    if (absent.length) {
      const since = Math.min(...Object.values(p.absent));
      host.append(
        el("p", {
          class: "conduct-flag",
          "data-testid": "waiting-for",
          text: `waiting for ${absent.join(", ")}: not connected (for ${TA.duration(Date.now() / 1000 - since)})`,
        }),
      );
    }
    for (const [qbot, why] of Object.entries(p.quarantined || {})) {
      host.append(
        el("p", {
          class: "conduct-flag",
          "data-testid": "quarantined",
          text: `${qbot} is in quarantine (${why}): its matches wait until \`tablanette league lift ${leagueId} ${qbot}\``,
        }),
      );
    }
    if (p.status === "incomplete") {
      host.append(
        el("p", { class: "conduct-flag", "data-testid": "incomplete", text: `${p.failed} match(es) failed: \`tablanette league retry ${leagueId}\` plays them again` }),
      );
    }
    const hint = document.getElementById("tournament-hint");
    const times = [];
    if (p.started_at) times.push(`started ${TA.time(p.started_at)}`);
    if (p.finished_at) times.push(`finished ${TA.time(p.finished_at)}`);
    if (p.started_at && p.finished_at) times.push(`in ${TA.duration(p.finished_at - p.started_at)}`);
    if (running) times.push("updating live");
    hint.textContent = times.join(" · ");
  }

  // ------------------------------------------------------------------ ladder

  function conductValue(r) {
    return r.timeouts + r.illegal + r.forfeits;
  }

  function conductCell(r) {
    const parts = [];
    if (r.timeouts) parts.push(`${r.timeouts} timeout${r.timeouts > 1 ? "s" : ""}`);
    if (r.illegal) parts.push(`${r.illegal} illegal`);
    if (r.forfeits) parts.push(`${r.forfeits} forfeit${r.forfeits > 1 ? "s" : ""}`);
    return parts.length ? el("span", { class: "conduct-flag", text: parts.join(" · ") }) : el("span", { class: "muted", text: "clean" });
  }

  let scale = { lo: 0, hi: 1 }; // the rating range the error bars are drawn in

  function errorBar(r) {
    const w = 140;
    const h = 16;
    const x = (v) => 4 + ((v - scale.lo) * (w - 8)) / Math.max(scale.hi - scale.lo, 1);
    if (!r.interval) return el("span", { class: "muted", "data-testid": "error-bar", text: "no games yet" });
    const [lo, hi] = r.interval;
    const label = `${num(r.rating, 0)}, 95% interval ${num(lo, 0)} to ${num(hi, 0)}`;
    return TA.svg(
      "svg",
      {
        class: "errbar" + (r.provisional ? " provisional" : ""),
        width: w,
        height: h,
        viewBox: `0 0 ${w} ${h}`,
        role: "img",
        "aria-label": label,
        "data-testid": "error-bar",
        "data-low": lo,
        "data-high": hi,
        "data-rating": r.rating,
      },
      TA.svg("title", { text: label }),
      TA.svg("line", { x1: x(lo), x2: x(hi), y1: h / 2, y2: h / 2, class: "range" }),
      TA.svg("line", { x1: x(lo), x2: x(lo), y1: 3, y2: h - 3, class: "cap" }),
      TA.svg("line", { x1: x(hi), x2: x(hi), y1: 3, y2: h - 3, class: "cap" }),
      TA.svg("circle", { cx: x(r.rating), cy: h / 2, r: 3.5, class: "pt" }),
    );
  }

  const LADDER_COLUMNS = [
    { key: "rank", label: "#", num: true },
    {
      key: "bot",
      label: "Bot",
      render: (r) =>
        el(
          "span",
          null,
          el("a", { class: "bot-link", href: urls.bot(leagueId, r.bot), text: r.bot }),
          r.provisional ? el("span", { class: "badge provisional", "data-testid": "provisional", title: "its interval is still wider than ±100", text: "provisional" }) : null,
        ),
    },
    {
      key: "rating",
      label: "Rating",
      num: true,
      defaultDir: -1,
      title: "fitted from every result (Bradley-Terry / Plackett-Luce); the same whatever order results came in",
      render: (r) => el("span", { "data-testid": "rating", text: num(r.rating, 0) }),
    },
    {
      key: "interval",
      label: "95% interval",
      value: (r) => (r.interval ? r.interval[1] - r.interval[0] : Infinity),
      title: "ratings the results do not rule out (profile likelihood)",
      render: (r) => el("span", { class: "nowrap" }, errorBar(r), el("span", { class: "muted small", "data-testid": "interval", text: r.interval ? ` ${num(r.interval[0], 0)}–${num(r.interval[1], 0)}` : "" })),
    },
    { key: "games", label: "Games", num: true, defaultDir: -1 },
    { key: "wins", label: "W", num: true, defaultDir: -1, title: "wins" },
    { key: "draws", label: "D", num: true, defaultDir: -1, title: "draws" },
    { key: "losses", label: "L", num: true, defaultDir: -1, title: "losses" },
    {
      key: "points_per_game",
      label: "Pts/game",
      num: true,
      defaultDir: -1,
      title: "match points per game",
      render: (r) => num(r.points_per_game, 1),
    },
    {
      key: "margin",
      label: "Margin",
      num: true,
      defaultDir: -1,
      title: "points per game over the opponents' (95% interval): a lower-noise second opinion",
      render: (r) => el("span", { class: "nowrap", text: `${r.margin >= 0 ? "+" : ""}${num(r.margin, 1)}` + (r.margin_interval ? ` (${num(r.margin_interval[0], 0)}…${num(r.margin_interval[1], 0)})` : "") }),
    },
    {
      key: "form",
      label: "Form",
      num: true,
      defaultDir: -1,
      title: "incremental Elo: a trend that depends on the order results came in, not the rating",
      render: (r) => el("span", { class: "nowrap" }, TA.sparkline(r.trend || []), el("span", { class: "muted small", text: r.form == null ? "" : ` ${num(r.form, 0)}` })),
    },
    { key: "conduct", label: "Conduct", value: conductValue, defaultDir: -1, render: conductCell, title: "timeouts, illegal plays, forfeits" },
  ];

  /** A league fitted on skill: its order's columns, after rank and bot (the win/loss rating stays beside). */
  const SKILL_COLUMNS = [
    {
      key: "skill",
      label: "Skill",
      num: true,
      defaultDir: -1,
      title: "points a match over an average bot of the league, the cards' luck taken out (95% interval); orders this ladder",
      render: (r) => el("span", { class: "nowrap", "data-testid": "skill", text: TA.signed(r.skill, 1) + (r.skill_interval ? ` (${TA.signed(r.skill_interval[0], 1)}…${TA.signed(r.skill_interval[1], 1)})` : "") }),
    },
    {
      key: "luck",
      label: "Luck",
      num: true,
      defaultDir: -1,
      title: "points a match the cards gave it, on average (over the matches with a luck estimate)",
      render: (r) => el("span", { "data-testid": "luck", text: TA.signed(r.luck, 1) }),
    },
  ];

  function renderLadder(data, append = false) {
    ladderRows = append ? ladderRows.concat(data.rows) : data.rows;
    const rows = ladderRows;
    const groupOf = {};
    data.groups.forEach((g, i) => g.forEach((b) => (groupOf[b] = { i, size: g.length })));
    rows.forEach((r) => (r.group = groupOf[r.bot] || { i: 0, size: 1 }));
    const known = rows.filter((r) => r.interval);
    if (known.length) scale = { lo: Math.min(...known.map((r) => r.interval[0])), hi: Math.max(...known.map((r) => r.interval[1])) };
    const unsettled = data.groups.filter((g) => g.length > 1);
    const onSkill = data.fit === "skill"
      ? ` Ordered by skill: each bot's point margins with the cards' luck taken out${data.without_luck ? ` (${data.without_luck} match(es) without a luck estimate count at their raw margin)` : ""}; the win/loss rating is beside it.`
      : "";
    document.getElementById("ladder-legend").textContent = !rows.length
      ? ""
      : (unsettled.length
        ? `Shaded rows are not settled yet: the likelihood that one is stronger than the next is below ${(100 * data.threshold).toFixed(1)}% (${unsettled.map((g) => g.join(", ")).join("; ")}). ${data.results} results.`
        : `Every bot is above the next with a likelihood of superiority of at least ${(100 * data.threshold).toFixed(1)}%. ${data.results} results.`) + onSkill;
    const host = document.getElementById("ladder");
    if (rows.length === 0) {
      clear(host).append(el("p", { class: "muted", "data-testid": "ladder-empty", text: "No game rated yet." }));
      ladderTable = null;
      return;
    }
    const more = document.getElementById("ladder-more");
    const total = data.total || rows.length;
    more.hidden = rows.length >= total;
    more.textContent = `Next ${Math.min(LADDER_PAGE, total - rows.length)} of ${total} bots`;
    document.getElementById("ladder-shown").textContent = rows.length < total ? `The top ${rows.length} of ${total} bots.` : "";
    if (ladderTable) {
      ladderTable.render(rows);
      return;
    }
    const columns = data.fit === "skill" ? [...LADDER_COLUMNS.slice(0, 2), ...SKILL_COLUMNS, ...LADDER_COLUMNS.slice(2)] : LADDER_COLUMNS;
    ladderTable = TA.sortableTable(columns, rows, {
      testid: "ladder",
      sort: { key: "rank", dir: 1 },
      rowAttrs: (r) => ({
        "data-testid": "ladder-row",
        "data-bot": r.bot,
        "data-group": r.group.i,
        class: r.group.size > 1 ? `unsettled g${r.group.i % 2}` : "",
      }),
    });
    clear(host).append(TA.wrapTable(ladderTable.table));
  }

  // ------------------------------------------------------------------ how sure: LOS

  function renderLos(data) {
    const host = clear(document.getElementById("los"));
    if (data.bots.length < 2) {
      host.append(el("p", { class: "muted", text: "Needs two bots." }));
      return;
    }
    if (data.total > data.bots.length) {
      host.append(el("p", { class: "muted small", text: `The top ${data.bots.length} of ${data.total} bots.` }));
    }
    const head = el("tr", null, el("th", { scope: "col", text: "" }), data.bots.map((b, j) => el("th", { scope: "col", class: "col-head", title: b, text: `${j + 1}. ${b}` })));
    const body = data.bots.map((a, i) =>
      el(
        "tr",
        { "data-testid": "los-row", "data-bot": a },
        el("th", { scope: "row", class: "row-head", text: `${i + 1}. ${a}` }),
        data.los[i].map((p, j) => {
          if (i === j) return el("td", { class: "diag" });
          const sure = p >= data.threshold ? "good" : p <= 1 - data.threshold ? "bad" : "even";
          return el("td", { class: `cell ${sure}`, "data-testid": "los-cell", "data-row": a, "data-col": data.bots[j], "data-los": p, title: `${a} is stronger than ${data.bots[j]} with likelihood ${(100 * p).toFixed(1)}%`, text: `${(100 * p).toFixed(p > 0.999 || p < 0.001 ? 2 : 1)}%` });
        }),
      ),
    );
    host.append(TA.wrapTable(el("table", { class: "data cross", "data-testid": "los" }, el("thead", null, head), el("tbody", null, body)), true));
  }

  // ------------------------------------------------------------------ crosstable

  function half(x) {
    return Number.isInteger(x) ? String(x) : x.toFixed(1).replace(/\.5$/, "½").replace(/^0½$/, "½");
  }

  function renderCrosstable(ct) {
    const host = document.getElementById("crosstable");
    clear(host);
    if (ct.bots.length < 2) {
      host.append(el("p", { class: "muted", text: "Needs two rated bots." }));
      return;
    }
    if (ct.shown < ct.total_bots) {
      host.append(el("p", { class: "muted small", text: `The top ${ct.shown} of ${ct.total_bots} bots.` }));
    }
    const head = el(
      "tr",
      null,
      el("th", { scope: "col", class: "row-head", text: "" }),
      ct.bots.map((b, j) => el("th", { scope: "col", class: "col-head", title: b, text: `${j + 1}. ${b}` })),
      el("th", { scope: "col", text: "Total" }),
    );
    const body = ct.bots.map((a, i) => {
      let score = 0;
      let games = 0;
      const cells = ct.bots.map((b) => {
        if (a === b) {
          return el("td", { class: "diag", "data-testid": "crosstable-diag", "data-row": a, "data-col": b, "aria-label": "same bot" });
        }
        const c = (ct.cells[a] || {})[b];
        if (!c) {
          return el("td", { class: "none", "data-testid": "crosstable-cell", "data-row": a, "data-col": b, "data-games": 0, title: `${a} has not met ${b}`, text: "·" });
        }
        score += c.score;
        games += c.games;
        const ratio = c.games ? c.score / c.games : 0.5;
        const cls = ratio > 0.5 ? "good" : ratio < 0.5 ? "bad" : "even";
        return el(
          "td",
          {
            class: `cell ${cls}`,
            "data-testid": "crosstable-cell",
            "data-row": a,
            "data-col": b,
            "data-score": c.score,
            "data-games": c.games,
            title: `${a} scored ${c.score} against ${b} in ${c.games} game(s)`,
          },
          el("span", { class: "s", text: half(c.score) }),
          el("span", { class: "g", text: ` / ${c.games}` }),
        );
      });
      return el(
        "tr",
        { "data-testid": "crosstable-row", "data-bot": a },
        el("th", { scope: "row", class: "row-head" }, `${i + 1}. `, el("a", { class: "bot-link", href: urls.bot(leagueId, a), text: a })),
        cells,
        el("td", { class: "num", "data-testid": "crosstable-total", text: games ? `${half(score)} / ${games}` : "–" }),
      );
    });
    host.append(TA.wrapTable(el("table", { class: "data cross", "data-testid": "crosstable" }, el("thead", null, head), el("tbody", null, body)), true));
  }

  // ------------------------------------------------------------------ matches

  function teams() {
    return (summary && summary.teams) || null;
  }

  function sidesOf(m) {
    const t = teams() || m.seats.map((_, s) => [s]);
    return t.map((seats, team) => ({ team, seats: seats.filter((s) => s < m.seats.length) }));
  }

  function playersCell(m) {
    const winner = m.result ? m.result.winner : undefined;
    const sides = sidesOf(m).map(({ team, seats }) =>
      el(
        "span",
        { class: winner === team ? "winner" : null },
        seats.map((s, k) => [
          k ? " & " : null,
          el("a", { class: winner === team ? "bot-link" : null, href: urls.bot(leagueId, m.seats[s]), text: m.seats[s] }),
          m.elo ? el("span", { class: `small ${m.elo[s] >= 0 ? "delta-up" : "delta-down"}`, text: ` ${TA.signed(m.elo[s])}` }) : null,
        ]),
      ),
    );
    return el("span", null, sides.map((s, i) => [i ? el("span", { class: "muted", text: " vs " }) : null, s]));
  }

  function resultText(m) {
    if (m.held) return "held back";
    if (!m.result) return m.status;
    const w = m.result.winner;
    const reason = m.result.reason + (m.result.forfeit_seat !== undefined && m.result.forfeit_seat !== null ? `, seat ${m.result.forfeit_seat} forfeited` : "");
    if (w === null || w === undefined) return `draw (${reason})`;
    const side = sidesOf(m)[w];
    const names = side ? side.seats.map((s) => m.seats[s]).join(" & ") : `team ${w}`;
    return `${names} won (${reason})`;
  }

  function matchRow(m) {
    return el(
      "tr",
      { "data-testid": "match-row", "data-match": m.match_id },
      el("td", { class: "nowrap", title: TA.fullTime(m.finished_at), text: TA.time(m.finished_at) }),
      el("td", { class: "mono", text: m.match_id }),
      el("td", null, playersCell(m)),
      el("td", { class: "num", "data-testid": "match-score", text: m.score ? m.score.join(" – ") : "–" }),
      el("td", { text: resultText(m) }),
      el(
        "td",
        null,
        m.held
          ? el("span", { class: "muted", "data-testid": "held", title: `${m.held.why}; shown once ${m.held.until}`, text: "held: its deal is still being played" })
          : m.status === "done"
          ? el("a", { href: urls.replay(leagueId, m.match_id), "data-testid": "replay-link", text: "replay ▸" })
          : m.status === "running"
            ? [TA.badge(m.status), " ", el("a", { href: urls.live(leagueId, m.match_id), "data-testid": "live-link", text: "watch ▸" })]
            : TA.badge(m.status),
      ),
    );
  }

  function renderMatches(data, append) {
    matchesShown = append ? matchesShown.concat(data.matches) : data.matches;
    const host = document.getElementById("matches");
    document.getElementById("matches-hint").textContent = `${matchesShown.length} of ${data.total} finished, newest first`;
    clear(host);
    if (matchesShown.length === 0) {
      host.append(el("p", { class: "muted", text: "No match finished yet." }));
    } else {
      host.append(
        TA.wrapTable(
          el(
            "table",
            { class: "data", "data-testid": "matches" },
            el("thead", null, el("tr", null, ["Finished", "Match", "Players (Elo change)", "Score", "Result", ""].map((h, i) => el("th", { class: i === 3 ? "num" : null, text: h })))),
            el("tbody", null, matchesShown.map(matchRow)),
          ),
        ),
      );
    }
    const more = document.getElementById("more");
    more.hidden = matchesShown.length >= data.total;

    const failedHost = clear(document.getElementById("failed"));
    if (data.failed.length) {
      failedHost.append(
        el("h3", { class: "conduct-flag", text: `Failed matches (${data.failed.length})` }),
        TA.wrapTable(
          el(
            "table",
            { class: "data", "data-testid": "failed-matches" },
            el("thead", null, el("tr", null, ["Match", "Players", "Status", "Attempts", "First cause", "Last error"].map((h) => el("th", { text: h })))),
            el(
              "tbody",
              null,
              data.failed.map((m) =>
                el(
                  "tr",
                  { "data-testid": "failed-row", "data-match": m.match_id },
                  el("td", { class: "mono", text: m.match_id }),
                  el("td", null, playersCell(m)),
                  el("td", null, TA.badge("failed")),
                  el("td", { class: "num", text: m.attempts ?? "–" }),
                  el("td", { class: "conduct-flag", style: "white-space: normal", "data-testid": "match-first-error", text: m.first_error || m.error || "unknown error" }),
                  el("td", { class: "conduct-flag", style: "white-space: normal", "data-testid": "match-error", text: m.error || "unknown error" }),
                ),
              ),
            ),
          ),
        ),
        el("p"),
      );
    }
  }

  document.getElementById("ladder-more").addEventListener("click", async () => {
    const data = await TA.load(api(`/ladder?limit=${LADDER_PAGE}&offset=${ladderRows.length}`));
    renderLadder(data, true);
  });

  document.getElementById("more").addEventListener("click", async () => {
    const data = await TA.load(api(`/matches?limit=${PAGE}&offset=${matchesShown.length}`));
    renderMatches(data, true);
  });

  // ------------------------------------------------------------------ loading and polling

  async function loadTables() {
    const [ladder, ct, matches, los] = await Promise.all([
      TA.load(api(`/ladder?limit=${Math.max(LADDER_PAGE, ladderRows.length)}`)),
      TA.load(api("/crosstable")),
      TA.load(api(`/matches?limit=${Math.max(PAGE, matchesShown.length)}`)),
      TA.load(api(`/los?limit=${LOS_TOP}`)),
    ]);
    renderLadder(ladder);
    renderLos(los);
    renderCrosstable(ct);
    renderMatches(matches, false);
  }

  async function poll() {
    pollTimer = null;
    let s;
    try {
      s = await TA.load(api(""));
    } catch (err) {
      TA.ready();
      if (err.status !== 404) pollTimer = setTimeout(poll, POLL_MS * 2); // a lost connection: try again
      else for (const id of ["tournament", "ladder", "crosstable", "matches"]) clear(document.getElementById(id));
      return;
    }
    TA.clearErrors();
    summary = s;
    renderFacts(s);
    renderProgress(s.progress, s.format === "standing");
    const counts = `${s.progress.done}/${s.progress.failed}/${s.progress.status}`;
    if (counts !== lastCounts) {
      lastCounts = counts;
      try {
        await loadTables();
      } catch (_) {
        /* shown by TA.load */
      }
    }
    TA.ready();
    if (LIVE.includes(s.progress.status)) pollTimer = setTimeout(poll, POLL_MS);
    else if (s.progress.status === "created") pollTimer = setTimeout(poll, POLL_MS * 2); // waiting for `league start`
  }

  poll();
})();
