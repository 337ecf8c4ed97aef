/* A standing ladder's past seasons on its league page: a link to each one's ladder (read-only). A league that is
   not a standing ladder has none: the panel stays hidden. Every label goes in as text. */
"use strict";

(() => {
  const { el, clear, urls, num } = TA;
  const leagueId = TA.pathParts()[1] || "";
  const api = urls.api(`/leagues/${encodeURIComponent(leagueId)}/seasons`);

  function render(data) {
    if (!data.seasons.length) return;
    const list = clear(document.getElementById("seasons"));
    for (const s of [...data.seasons].reverse()) {
      const href = `${urls.league(leagueId)}/seasons/${s.season}`;
      list.append(
        el(
          "li",
          { "data-testid": "season" },
          el("a", { href, text: `Season ${s.season}` + (s.label ? `: ${s.label}` : "") }),
          el("span", { class: "muted small", text: ` · ${TA.time(s.at)} · ${num(s.results)} results` + (s.leader ? ` · ${s.leader} first` : "") + (s.new ? " · a new season started" : "") }),
        ),
      );
    }
    document.getElementById("seasons-panel").hidden = false;
  }

  // only a standing ladder has seasons: ask for them only then (the API answers 404 for any other league,
  // which a browser would log as an error on every league page)
  TA.fetchJSON(urls.api(`/leagues/${encodeURIComponent(leagueId)}`))
    .then((league) => (league.format === "standing" ? TA.fetchJSON(api).then(render) : null))
    .catch(() => {});
})();
