/* The league list: status, progress and bots of every league; refreshes while one is running. */
"use strict";

(() => {
  const { el, clear, urls } = TA;
  TA.header("leagues");
  let timer = null;

  function render(leagues) {
    const host = document.getElementById("leagues");
    document.getElementById("leagues-count").textContent = `${leagues.length} league(s)`;
    clear(host);
    if (leagues.length === 0) {
      host.append(
        el("p", { class: "muted" }, "No league yet. Create one with ", el("code", { text: "tablanette league create" }),
          " or run ", el("code", { text: "tablanette demo" }), "."),
      );
      return;
    }
    const table = el(
      "table",
      { class: "data", "data-testid": "leagues" },
      el(
        "thead",
        null,
        el("tr", null,
          el("th", { text: "League" }),
          el("th", { text: "Status" }),
          el("th", { text: "Progress" }),
          el("th", { class: "num", text: "Matches" }),
          el("th", { class: "num", text: "Bots" }),
          el("th", { text: "Rules" }),
          el("th", { text: "Format" })),
      ),
      el(
        "tbody",
        null,
        leagues.map((l) =>
          el(
            "tr",
            { "data-testid": "league-row", "data-league": l.id },
            el("td", null, el("a", { class: "bot-link", href: urls.league(l.id), text: l.id })),
            el("td", null, TA.badge(l.status)),
            el("td", null, TA.progressBar({ total: l.total, done: l.done, failed: l.failed }, true)),
            el(
              "td",
              { class: "num", "data-testid": "league-progress" },
              `${l.done} / ${l.total}`,
              l.failed ? el("span", { class: "conduct-flag", text: ` (${l.failed} failed)` }) : null,
            ),
            el("td", { class: "num", text: l.bots }),
            el("td", { text: `${l.preset}, ${l.players} players` }),
            el("td", { text: l.format }),
          ),
        ),
      ),
    );
    host.append(TA.wrapTable(table));
  }

  function renderHosted(bots) {
    const host = clear(document.getElementById("hosted-list"));
    document.getElementById("hosted-count").textContent = `${bots.length} bot(s)`;
    if (bots.length === 0) {
      host.append(el("p", { class: "muted" }, "None yet. Submit one with ", el("code", { text: "tablanette bot submit DIR --name NAME" }), "."));
      return;
    }
    host.append(
      el(
        "ul",
        { class: "plain", "data-testid": "hosted-bots" },
        bots.map((b) =>
          el(
            "li",
            { "data-testid": "hosted-bot", "data-bot": b.bot },
            el("a", { href: urls.hosted(b.bot), text: b.bot }),
            ": ",
            b.versions.map((v, i) => [i ? ", " : null, el("a", { href: urls.version(v.name), text: `@${v.number}` }), " ", TA.badge(v.state)]),
          ),
        ),
      ),
    );
  }

  async function refresh() {
    let leagues, hosted;
    try {
      [leagues, hosted] = await Promise.all([TA.load(urls.api("/leagues")), TA.load(urls.api("/bots"))]);
    } catch (_) {
      TA.ready();
      return;
    }
    TA.clearErrors();
    render(leagues);
    renderHosted(hosted);
    TA.ready();
    clearTimeout(timer);
    if (leagues.some((l) => ["running", "waiting", "paused"].includes(l.status))) timer = setTimeout(refresh, 2000);
  }

  refresh();
})();
