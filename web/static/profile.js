/* Any bot, connected or hosted, across every league it plays in: its rating and conduct in each, its
   totals, its form over time per league, its latest matches; and a hosted bot's versions and the owner's
   submit form. */
"use strict";

(() => {
  const { el, clear, urls, num } = TA;
  TA.header(null); // the section is known once the bot is: hosted bots, or leagues
  const bot = TA.pathParts()[1] || "";
  document.title = `${bot} · Tablanette Arena`;
  document.getElementById("bot-name").textContent = bot;
  let shown = false; // the crumbs and the kind are set on the first answer

  function stat(label, value, testid) {
    return el(
      "div",
      { class: "stat" },
      el("div", { class: "label", text: label }),
      el("div", { class: "value", "data-testid": testid, text: value }),
    );
  }

  const interval = (iv) => (iv ? `${num(iv[0], 0)} – ${num(iv[1], 0)}` : "–");

  function renderHead(data) {
    if (shown) return;
    shown = true;
    TA.header(data.hosted ? "bots" : "leagues");
    const kind = document.getElementById("bot-kind");
    kind.textContent = data.hosted ? "hosted" : "connected";
    document.getElementById("bot-sub").textContent = data.hosted
      ? "A hosted bot: the arena builds each version it is sent and runs it in a sandbox; each version is rated on its own."
      : "A connected bot: it plays from its author's machine through the engine service.";
    document.getElementById("crumbs").append(
      TA.crumbs(data.hosted ? [["Hosted bots", "/#hosted"], [bot, null]] : [["Leagues", urls.home()], [bot, null]]),
    );
    document.getElementById("hosted-part").hidden = !data.hosted;
  }

  function renderLeagues(data) {
    const host = clear(document.getElementById("leagues"));
    if (data.leagues.length === 0) {
      host.append(el("p", { class: "muted", text: "It plays in no league yet." }));
      return;
    }
    const rows = data.leagues.map((s) =>
      el(
        "tr",
        { "data-testid": "profile-league", "data-league": s.league, "data-name": s.name },
        el("td", null, el("a", { href: urls.league(s.league), text: s.league }), s.preflight ? el("span", { class: "muted small", text: " preflight" }) : null),
        el("td", null, el("a", { href: urls.bot(s.league, s.name), "data-testid": "profile-entry", text: s.name })),
        el("td", { class: "num", "data-testid": "profile-rating", text: s.rating === null ? "–" : num(s.rating, 0) }),
        el("td", { class: "num nowrap", "data-testid": "profile-interval", text: interval(s.interval) }),
        el("td", { class: "num", "data-testid": "profile-games", text: s.games }),
        el("td", { class: "num", text: s.timeouts }),
        el("td", { class: "num", text: s.illegal }),
        el("td", { class: "num", text: s.forfeits }),
        el("td", null, s.quarantine ? el("span", { class: "badge quarantined", text: "quarantined" }) : null),
      ),
    );
    const head = [["League"], ["As"], ["Rating", "num"], ["95% interval", "num"], ["Games", "num"], ["Timeouts", "num"], ["Illegal", "num"], ["Forfeits", "num"], [""]];
    host.append(
      TA.wrapTable(
        el(
          "table",
          { class: "data", "data-testid": "profile-leagues" },
          el("thead", null, el("tr", null, head.map(([h, cls]) => el("th", { class: cls || null, text: h })))),
          el("tbody", null, rows),
        ),
      ),
    );
  }

  function renderTotals(data) {
    const t = data.totals;
    const rated = data.leagues.filter((s) => !s.preflight).length;
    clear(document.getElementById("totals")).append(
      stat("Leagues", rated, "total-leagues"),
      stat("Games", t.games, "total-games"),
      stat("Timeouts", t.timeouts, "total-timeouts"),
      stat("Illegal plays", t.illegal, "total-illegal"),
      stat("Forfeits", t.forfeits, "total-forfeits"),
      stat("Per game", t.games ? num((t.timeouts + t.illegal) / t.games, 2) : "–", "total-conduct-rate"),
    );
  }

  function renderChart(data) {
    const host = clear(document.getElementById("chart"));
    const series = data.history
      .filter((h) => h.form.some((p) => p.at))
      .map((h) => ({
        label: h.name === bot ? h.league : `${h.league} (${h.name})`,
        points: h.form
          .filter((p) => p.at)
          .map((p) => ({ x: p.at, y: p.rating, title: `${h.league}, ${TA.time(p.at)} (${p.match}): ${num(p.rating, 1)}`, href: urls.replay(h.league, p.match) })),
      }));
    const all = series.flatMap((s) => s.points.map((p) => p.x));
    const span = all.length ? Math.max(...all) - Math.min(...all) : 0;
    const width = Math.max(300, Math.min(1100, host.clientWidth || 720));
    host.append(
      TA.seriesChart(series, {
        width,
        height: width < 500 ? 240 : 300,
        testid: "profile-chart",
        xFormat: TA.timeTick(span),
        xLabel: "when the match finished",
        label: `form (incremental Elo) of ${bot} after each match, one line a league`,
      }),
    );
    const games = data.history.reduce((a, h) => a + h.points, 0);
    document.getElementById("chart-hint").textContent = series.length
      ? `form: the incremental Elo after each of ${games} match(es), one line a league (each league starts its bots at its own initial rating); the fitted rating with its interval is in the table above`
      : "";
  }

  function renderRecent(data) {
    const host = clear(document.getElementById("recent"));
    document.getElementById("recent-hint").textContent = `the last ${data.recent.length} over all its leagues, newest first`;
    if (data.recent.length === 0) {
      host.append(el("p", { class: "muted", text: "No match yet." }));
      return;
    }
    const teamsOf = Object.fromEntries(data.leagues.map((s) => [s.league, s.teams]));
    const rows = data.recent.map((m) => {
      const v = TA.matchFor(m, m.name, teamsOf[m.league]);
      const score = TA.scoreText(v);
      const result = TA.resultCell(m, v);
      return el(
        "tr",
        { "data-testid": "profile-match", "data-league": m.league, "data-match": m.match_id, "data-result": v.letter || "" },
        el("td", { class: "nowrap", title: TA.fullTime(m.finished_at), text: TA.time(m.finished_at) }),
        el("td", null, el("a", { href: urls.league(m.league), text: m.league })),
        el("td", null, v.opponents.map((o, i) => [i ? ", " : null, el("a", { href: urls.bot(m.league, o), text: o })])),
        el("td", null, result),
        el("td", { class: "num", text: score }),
        el("td", null, m.held ? el("span", { class: "muted", title: m.held.why, text: "held: its deal is still being played" }) : m.status === "done" ? el("a", { href: urls.replay(m.league, m.match_id), text: "replay ▸" }) : null),
      );
    });
    const head = [["Finished"], ["League"], ["Opponent"], ["Result"], ["Score", "num"], [""]];
    host.append(
      TA.wrapTable(
        el(
          "table",
          { class: "data", "data-testid": "profile-matches" },
          el("thead", null, el("tr", null, head.map(([h, cls]) => el("th", { class: cls || null, text: h })))),
          el("tbody", null, rows),
        ),
      ),
    );
  }

  function renderVersions(data) {
    if (!data.hosted) return;
    const rows = data.versions.map((v) => {
      const pf = v.preflight;
      const check = pf ? (pf.passed ? `passed (${pf.games} games)` : `failed: ${pf.problems.join("; ")}`) : "–";
      const leagues = v.leagues.map((s) =>
        el(
          "li",
          { "data-testid": "version-league", "data-league": s.league },
          el("a", { href: urls.bot(s.league, v.name), text: s.league }),
          s.preflight ? el("span", { class: "muted small", text: " preflight" }) : null,
          `: ${s.rating === null ? "–" : num(s.rating, 0)}${s.interval ? ` (${interval(s.interval)})` : ""}, ${s.games} game(s)`,
          s.quarantine ? el("span", { class: "badge quarantined", text: "quarantined" }) : null,
        ),
      );
      return el(
        "tr",
        { "data-testid": "version-row", "data-version": v.name, "data-state": v.state },
        el("td", null, el("a", { href: urls.version(v.name), text: v.name })),
        el("td", null, TA.badge(v.state), v.note ? el("div", { class: "muted small", "data-testid": "note", text: v.note }) : null),
        el("td", { text: `${v.language || "?"}, ${v.protocol}` }),
        el("td", { class: "nowrap", title: TA.fullTime(v.submitted), text: TA.time(v.submitted) }),
        el("td", { class: "mono", title: v.source_hash, text: v.source_hash.slice(0, 12) }),
        el("td", { text: check }),
        el("td", null, leagues.length ? el("ul", { class: "plain" }, leagues) : "–"),
      );
    });
    const head = ["Version", "State", "Language", "Submitted", "Source", "Preflight", "Leagues (rating, 95% interval)"];
    clear(document.getElementById("versions")).append(
      TA.wrapTable(
        el(
          "table",
          { class: "data", "data-testid": "versions" },
          el("thead", null, el("tr", null, head.map((h) => el("th", { text: h })))),
          el("tbody", null, rows),
        ),
      ),
    );
  }

  let last = null;

  async function refresh() {
    try {
      last = await TA.load(urls.api(`/bots/${encodeURIComponent(bot)}`));
    } catch (_) {
      for (const id of ["leagues", "totals", "chart", "recent", "versions"]) clear(document.getElementById(id));
      return;
    }
    renderHead(last);
    renderLeagues(last);
    renderTotals(last);
    renderChart(last);
    renderRecent(last);
    renderVersions(last);
  }

  const KEY = `owner-key:${bot}`;
  const keyInput = document.getElementById("owner-key");
  keyInput.value = sessionStorage.getItem(KEY) || "";
  document.getElementById("submit-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const result = document.getElementById("submit-result");
    const file = document.getElementById("archive").files[0];
    result.className = "";
    result.textContent = "Submitting…";
    try {
      const res = await fetch(urls.api(`/bots/${encodeURIComponent(bot)}/versions`), {
        method: "POST",
        headers: { Authorization: `Bearer ${keyInput.value.trim()}`, "Content-Type": "application/gzip" },
        body: file,
      });
      const body = await res.json().catch(() => ({}));
      if (!res.ok) throw new Error(body.detail || `${res.status} ${res.statusText}`);
      sessionStorage.setItem(KEY, keyInput.value.trim());
      result.textContent = `Submitted ${body.name} (source ${body.source_hash.slice(0, 12)}): it is built and preflighted next.`;
      result.dataset.version = body.name;
      await refresh();
    } catch (err) {
      result.className = "conduct-flag";
      result.textContent = `Not submitted: ${err.message}`;
    }
  });

  let lastWidth = 0;
  window.addEventListener("resize", () => {
    const w = document.getElementById("chart").clientWidth;
    if (last && Math.abs(w - lastWidth) > 40) {
      lastWidth = w;
      renderChart(last);
    }
  });

  async function main() {
    await refresh();
    lastWidth = document.getElementById("chart").clientWidth;
    TA.ready();
    setInterval(refresh, 5000); // new results, and a hosted version's build and preflight, move on while it is open
  }

  main();
})();
