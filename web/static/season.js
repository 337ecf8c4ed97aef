/* One season of a standing ladder: the ladder it kept, read-only. Every name and label goes in as text. */
"use strict";

(() => {
  const { el, clear, urls, num } = TA;
  TA.header("leagues");

  const parts = TA.pathParts(); // ["leagues", id, "seasons", n]
  const leagueId = parts[1] || "";
  const number = parts[3] || "";
  const title = `Season ${number}`;
  document.title = `${leagueId} · ${title} · Tablanette Arena`;
  document.getElementById("season-name").textContent = `${leagueId}: ${title}`;
  document.getElementById("crumbs").append(TA.crumbs([["Leagues", urls.home()], [leagueId, urls.league(leagueId)], [title, null]]));

  const COLUMNS = [
    { key: "rank", label: "#", num: true },
    {
      key: "bot",
      label: "Bot",
      render: (r) => el("span", null, el("a", { class: "bot-link", href: urls.bot(leagueId, r.bot), text: r.bot }),
        r.provisional ? el("span", { class: "badge provisional", text: "provisional" }) : null),
    },
    { key: "rating", label: "Rating", num: true, defaultDir: -1, render: (r) => num(r.rating, 0) },
    {
      key: "interval",
      label: "95% interval",
      value: (r) => (r.interval ? r.interval[1] - r.interval[0] : Infinity),
      render: (r) => (r.interval ? `${num(r.interval[0], 0)}–${num(r.interval[1], 0)}` : "no games"),
    },
    { key: "games", label: "Games", num: true, defaultDir: -1 },
    { key: "wins", label: "W", num: true, defaultDir: -1, title: "wins" },
    { key: "draws", label: "D", num: true, defaultDir: -1, title: "draws" },
    { key: "losses", label: "L", num: true, defaultDir: -1, title: "losses" },
    { key: "form", label: "Form", num: true, defaultDir: -1, title: "incremental Elo then", render: (r) => (r.form == null ? "–" : num(r.form, 0)) },
  ];

  function render(s) {
    if (s.label) document.getElementById("season-name").textContent = `${leagueId}: ${title} (${s.label})`;
    const fact = (label, value) => el("span", null, `${label} `, el("b", { text: value }));
    clear(document.getElementById("season-facts")).append(
      fact("kept", TA.fullTime(s.at)),
      fact("results", num(s.results)),
      fact("bots", num(s.bots)),
      fact("then", s.new ? "a new season started" : "the season went on"),
    );
    const host = clear(document.getElementById("season-ladder"));
    if (!s.rows.length) {
      host.append(el("p", { class: "muted", text: "No bot on the ladder." }));
      return;
    }
    const table = TA.sortableTable(COLUMNS, s.rows, {
      testid: "season-ladder",
      sort: { key: "rank", dir: 1 },
      rowAttrs: (r) => ({ "data-testid": "season-row", "data-bot": r.bot }),
    });
    host.append(TA.wrapTable(table.table));
  }

  TA.load(urls.api(`/leagues/${encodeURIComponent(leagueId)}/seasons/${encodeURIComponent(number)}`))
    .then(render)
    .catch(() => clear(document.getElementById("season-ladder")))
    .finally(TA.ready);
})();
