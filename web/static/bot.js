/* One bot of a league: rating history, record, luck and skill, conduct (timeouts, illegal plays, forfeits),
   recent matches; in a standing ladder also its fitted rating over time, with its interval. */
"use strict";

(() => {
  const { el, clear, urls, num } = TA;
  TA.header("leagues");

  const parts = TA.pathParts(); // ["leagues", league, "bots", bot]
  const leagueId = parts[1] || "";
  const bot = parts.slice(3).join("/");
  const api = (p) => urls.api(`/leagues/${encodeURIComponent(leagueId)}${p}`);

  document.title = `${bot} · ${leagueId} · Tablanette Arena`;
  document.getElementById("bot-name").textContent = bot;
  document.getElementById("crumbs").append(
    TA.crumbs([["Leagues", urls.home()], [leagueId, urls.league(leagueId)], [bot, null]]),
  );

  function stat(label, value, testid, extraCls) {
    return el(
      "div",
      { class: "stat" + (extraCls ? ` ${extraCls}` : "") },
      el("div", { class: "label", text: label }),
      el("div", { class: "value", "data-testid": testid, text: value }),
    );
  }

  function renderStats(b) {
    document.getElementById("bot-rank").textContent = `rank #${b.rank}`;
    document.getElementById("bot-sub").textContent =
      `in league ${leagueId}` + (b.last_played ? ` · last played ${TA.time(b.last_played)}` : "");
    document.getElementById("bot-sub").append(" · ", el("a", { href: urls.hosted(TA.botName(bot)), "data-testid": "profile-link", text: "every league it plays in ▸" }));
    if (/@\d+$/.test(bot)) {  // a hosted version: its build, preflight, faults and output are on its own page
      document.getElementById("bot-sub").append(" · ", el("a", { href: urls.version(bot), "data-testid": "version-link", text: "hosted version: build, preflight, faults" }));
    }
    const winPct = b.games ? Math.round((100 * (b.wins + 0.5 * b.draws)) / b.games) : 0;
    clear(document.getElementById("stats")).append(
      stat("Rating", num(b.rating, 0), "rating"),
      stat("95% interval", b.interval ? `${num(b.interval[0], 0)} – ${num(b.interval[1], 0)}` + (b.provisional ? " (provisional)" : "") : "–", "interval"),
      stat("Form (Elo)", num(b.form, 1), "form"),
      stat("Rank", `#${b.rank}`, "rank"),
      stat("Games", b.games, "games"),
      stat("W / D / L", `${b.wins} / ${b.draws} / ${b.losses}`, "wdl"),
      stat("Score %", `${winPct}%`, "score-pct"),
      stat("Points / game", num(b.points_per_game, 1), "ppg"),
    );
    renderCards(b);
    const flag = document.getElementById("quarantine");
    if (b.quarantine) {
      const q = b.quarantine;
      flag.hidden = false;
      flag.textContent = `In quarantine since ${TA.time(q.at)}: ${q.reason}. Its matches wait (never charged to its opponents) until an operator runs \`tablanette league lift ${leagueId} ${bot}\`.`;
    } else flag.hidden = true;
    const level = (n, severe) => (n === 0 ? "clean" : severe ? "worse" : "bad");
    clear(document.getElementById("conduct")).append(
      stat("Timeouts", b.timeouts, "timeouts", `conduct ${level(b.timeouts)}`),
      stat("Illegal plays", b.illegal, "illegal", `conduct ${level(b.illegal)}`),
      stat("Forfeits", b.forfeits, "forfeits", `conduct ${level(b.forfeits, true)}`),
      stat("Per game", b.games ? num((b.timeouts + b.illegal) / b.games, 2) : "–", "conduct-rate",
        `conduct ${level(b.timeouts + b.illegal)}`),
    );
  }

  /** How much of the bot's result was the cards: its margins a match, split into luck and skill. */
  function renderCards(b) {
    const c = b.cards || { games: 0 };
    const host = clear(document.getElementById("cards"));
    document.getElementById("cards-hint").textContent = c.games
      ? `points a match over its opponents, over the ${c.games} of ${b.games} match(es) with a luck estimate (forfeits and aborts have none): margin = luck + skill`
      : "no match with a luck estimate yet (forfeits and aborts have none)";
    const skill = b.skill === undefined ? [] : [
      stat("Skill rating", TA.signed(b.skill, 1), "skill-rating"),
      stat("95% interval", b.skill_interval ? `${TA.signed(b.skill_interval[0], 1)} – ${TA.signed(b.skill_interval[1], 1)}` : "–", "skill-interval"),
    ];
    host.append(
      stat("Margin / match", c.games ? TA.signed(c.raw, 1) : "–", "cards-raw"),
      stat("Luck / match", c.games ? TA.signed(c.luck, 1) : "–", "cards-luck"),
      stat("Skill / match", c.games ? TA.signed(c.skill, 1) : "–", "cards-skill"),
      stat("Rated for luck", `${c.games} of ${b.games}`, "cards-games"),
      ...skill,
    );
  }

  /** The bot's side's raw, luck and skill margins in one match (null when the match has no luck). */
  function matchLuck(m, v) {
    if (!m.luck || !m.score || v.team === undefined || v.team === null || v.team < 0 || m.luck[v.team] === undefined) return null;
    const others = m.score.filter((_, i) => i !== v.team);
    const raw = m.score[v.team] - others.reduce((a, x) => a + x, 0) / others.length;
    const luck = m.luck[v.team];
    return { raw, luck, skill: raw - luck };
  }

  function renderChart(b, initial) {
    const host = clear(document.getElementById("chart"));
    const n = b.history.length;
    const scale = n ? b.history_points / n : 1;
    const points = b.history.map((h, i) => ({
      x: Math.round(i * scale) + 1,
      y: h.rating,
      title: `game ${Math.round(i * scale) + 1} (${h.match}): ${num(h.rating, 1)}`,
      href: urls.replay(leagueId, h.match),
    }));
    if (n && initial !== undefined) points.unshift({ x: 0, y: initial, title: `start: ${num(initial)}` });
    const width = Math.max(300, Math.min(1100, host.clientWidth || 720));
    host.append(
      TA.lineChart(points, {
        width,
        height: width < 500 ? 220 : 280,
        testid: "rating-chart",
        baseline: initial,
        xLabel: "games played",
        label: `form (incremental Elo) of ${bot} over ${b.history_points} game(s)`,
      }),
    );
    document.getElementById("chart-hint").textContent = n
      ? `form: the incremental Elo after each of ${b.history_points} game(s), which depends on the order results came in; dashed line: the initial rating${b.history_points > n ? `; every ${Math.round(scale)}th point shown` : ""}`
      : "";
  }

  /** A standing ladder's bot: its fitted rating each time the scheduler refitted, its 95% interval as a band. */
  function renderFitted(b) {
    const panel = document.getElementById("fitted-panel");
    if (b.fitted_history === undefined) return; // an event league: no such chart
    panel.hidden = false;
    const host = clear(document.getElementById("fitted"));
    const h = b.fitted_history;
    const interval = (p) => (p.interval[0] === null && p.interval[1] === null ? "" : ` (95%: ${p.interval[0] === null ? "…" : num(p.interval[0], 0)} – ${p.interval[1] === null ? "…" : num(p.interval[1], 0)})`);
    const points = h.map((p) => ({
      x: p.at,
      y: p.rating,
      lo: p.interval[0],
      hi: p.interval[1],
      title: `${TA.time(p.at)}, after ${p.results} result(s): ${num(p.rating, 1)}${interval(p)}`,
    }));
    const span = h.length ? h[h.length - 1].at - h[0].at : 0;
    const width = Math.max(300, Math.min(1100, host.clientWidth || 720));
    host.append(
      TA.seriesChart([{ band: true, points }], {
        width,
        height: width < 500 ? 220 : 280,
        testid: "fitted-chart",
        xFormat: TA.timeTick(span),
        xLabel: "when the ladder was refitted",
        label: `fitted rating of ${bot} over time, with its 95% interval`,
      }),
    );
    document.getElementById("fitted-caption").textContent = h.length
      ? `The ladder's fitted rating each time it was refitted and the rating moved; shaded: its 95% interval (${h.length} point(s), older ones thinned).`
      : "No fitted rating recorded yet: one is recorded each time the ladder is refitted once this bot has played.";
  }

  function renderRecent(b, teams) {
    const host = clear(document.getElementById("recent"));
    document.getElementById("recent-hint").textContent = `the last ${b.recent.length} of ${b.games}, newest first`;
    if (b.recent.length === 0) {
      host.append(el("p", { class: "muted", text: "No match yet." }));
      return;
    }
    const rows = b.recent.map((m) => {
      const v = TA.matchFor(m, bot, teams);
      const lk = matchLuck(m, v);
      const who = [
        v.opponents.map((o, i) => [i ? ", " : null, el("a", { href: urls.bot(leagueId, o), text: o })]),
        v.partners.length ? el("span", { class: "muted small", text: ` (with ${v.partners.join(", ")})` }) : null,
      ];
      const score = TA.scoreText(v);
      const result = TA.resultCell(m, v);
      return el(
        "tr",
        { "data-testid": "bot-match-row", "data-match": m.match_id, "data-result": v.letter || "" },
        el("td", { class: "nowrap", title: TA.fullTime(m.finished_at), text: TA.time(m.finished_at) }),
        el("td", { class: "mono", text: m.match_id }),
        el("td", null, who),
        el("td", { class: "num", text: v.seat }),
        el("td", null, result, m.result && m.result.reason !== "target" ? el("span", { class: "muted small", text: ` ${m.result.reason}` }) : null),
        el("td", { class: "num", "data-testid": "score", text: score }),
        el("td", { class: `num ${v.elo > 0 ? "delta-up" : v.elo < 0 ? "delta-down" : ""}`, "data-testid": "elo", text: v.elo === null ? "–" : TA.signed(v.elo) }),
        el("td", { class: "num", "data-testid": "luck", title: lk ? `margin ${TA.signed(lk.raw, 1)} = luck ${TA.signed(lk.luck, 1)} + skill ${TA.signed(lk.skill, 1)}` : "no luck estimate (a forfeit or an abort)", text: lk ? TA.signed(lk.luck, 1) : "–" }),
        el("td", { class: "num", "data-testid": "skill", text: lk ? TA.signed(lk.skill, 1) : "–" }),
        el("td", null, m.held ? el("span", { class: "muted", "data-testid": "held", title: m.held.why, text: "held: its deal is still being played" }) : m.status === "done" ? el("a", { href: urls.replay(leagueId, m.match_id), "data-testid": "replay-link", text: "replay ▸" }) : null),
      );
    });
    host.append(
      TA.wrapTable(
        el(
          "table",
          { class: "data", "data-testid": "bot-matches" },
          el(
            "thead",
            null,
            el("tr", null, [["Finished"], ["Match"], ["Opponent"], ["Seat", "num"], ["Result"], ["Score", "num"], ["Elo", "num"], ["Luck", "num"], ["Skill", "num"], [""]].map(
              ([h, cls]) => el("th", { class: cls || null, text: h }),
            )),
          ),
          el("tbody", null, rows),
        ),
      ),
    );
  }

  async function main() {
    try {
      const [b, league] = await Promise.all([TA.load(api(`/bots/${encodeURIComponent(bot)}?limit=30`)), TA.load(api(""))]);
      renderStats(b);
      renderChart(b, league.initial);
      renderFitted(b);
      let lastWidth = document.getElementById("chart").clientWidth;
      window.addEventListener("resize", () => {
        const w = document.getElementById("chart").clientWidth;
        if (Math.abs(w - lastWidth) > 40) {
          lastWidth = w;
          renderChart(b, league.initial);
          renderFitted(b);
        }
      });
      renderRecent(b, league.teams);
    } catch (_) {
      for (const id of ["stats", "cards", "conduct", "chart", "fitted", "recent"]) clear(document.getElementById(id));
    }
    TA.ready();
  }

  main();
})();
