/* A hosted bot: its versions, where each stands (build, preflight) and its rating in each league. */
"use strict";

(() => {
  const { el, clear, urls, num } = TA;
  TA.header("bots");
  const bot = TA.pathParts()[1] || "";
  document.title = `${bot} · Tablanette Arena`;
  document.getElementById("bot-name").textContent = bot;
  document.getElementById("crumbs").append(TA.crumbs([["Hosted bots", "/#hosted"], [bot, null]]));

  function standing(s) {
    const rating = s.rating === null ? "–" : num(s.rating, 0);
    const interval = s.interval ? ` (${num(s.interval[0], 0)}–${num(s.interval[1], 0)})` : "";
    return el(
      "li",
      { "data-testid": "version-league", "data-league": s.league },
      el("a", { href: urls.bot(s.league, s.name || ""), text: s.league }),
      s.preflight ? el("span", { class: "muted small", text: " preflight" }) : null,
      `: ${rating}${interval}, ${s.games} game(s)`,
      s.quarantine ? el("span", { class: "badge quarantined", text: "quarantined" }) : null,
    );
  }

  function render(data) {
    const rows = data.versions.map((v) => {
      const pf = v.preflight;
      const check = pf ? (pf.passed ? `passed (${pf.games} games)` : `failed: ${pf.problems.join("; ")}`) : "–";
      const leagues = v.leagues.map((s) => standing({ ...s, name: v.name }));
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
    clear(document.getElementById("versions")).append(
      TA.wrapTable(
        el(
          "table",
          { class: "data", "data-testid": "versions" },
          el("thead", null, el("tr", null, ["Version", "State", "Language", "Submitted", "Source", "Preflight", "Leagues (rating, 95% interval)"].map((h) => el("th", { text: h })))),
          el("tbody", null, rows),
        ),
      ),
    );
  }

  async function refresh() {
    try {
      render(await TA.load(urls.api(`/bots/${encodeURIComponent(bot)}`)));
    } catch (_) {
      clear(document.getElementById("versions"));
    }
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

  async function main() {
    await refresh();
    TA.ready();
    setInterval(refresh, 3000); // a version's build and preflight move on while the page is open
  }

  main();
})();
