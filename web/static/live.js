/* A running match, live: its public events from the server (Server-Sent Events), drawn as they come. */
"use strict";

(() => {
  const { el, clear, urls } = TA;
  TA.header("leagues");

  const parts = TA.pathParts(); // ["leagues", league, "live", ...match id]
  const leagueId = parts[1] || "";
  const matchId = parts.slice(3).join("/");
  const $id = (id) => document.getElementById(id);
  document.title = `Live ${matchId} · Tablanette Arena`;
  $id("crumbs").append(TA.crumbs([["Leagues", urls.home()], [leagueId, urls.league(leagueId)], [`live ${matchId}`, null]]));

  let players = [];
  let teams = [];
  let attempt = null;
  const seatName = (s) => players[s] || `seat ${s}`; // the league's names (a hosted version keeps its @N)
  const teamName = (t) => (teams[t] || [t]).map(seatName).join(" & ");

  function draw(e) {
    if (e.scores && e.scores.length * 2 === players.length) teams = [[0, 2], [1, 3]]; // partnerships
    const board = clear($id("board"));
    board.append(
      el("div", { class: "table-area", "data-testid": "live-table" }, el("div", { class: "muted small", text: "table" }), TA.cards(e.table, { empty: "empty" })),
    );
    (e.hand_counts || []).forEach((count, s) => {
      board.append(
        el(
          "div",
          { class: "seat" + (e.to_move === s ? " to-move" : ""), "data-testid": `live-seat-${s}`, "data-to-move": e.to_move === s ? "true" : "false" },
          el(
            "div",
            { class: "seat-head" },
            el("span", { class: "name", text: seatName(s) }),
            el("span", { class: "meta", text: `seat ${s} · ${count} card${count === 1 ? "" : "s"} in hand` }),
            e.to_move === s ? el("span", { class: "turn", "data-testid": "to-move", text: "to move" }) : null,
          ),
        ),
      );
    });
    board.append(el("div", { class: "muted small", "data-testid": "live-stock", text: `stock: ${e.stock_count} · captured: ${e.captured_counts.join(" / ")}` }));
    $id("score-line").textContent = (e.scores || []).map((p, t) => `${teamName(t)} ${p}`).join(" · ");
  }

  function log(text, testid) {
    $id("log").prepend(el("li", { "data-testid": testid, text }));
  }

  const describe = {
    deal: (e) => `deal ${e.deal + 1} dealt (dealer ${seatName(e.dealer)}); table ${e.table.join(" ") || "empty"}`,
    round: (e) => `new hands (round ${e.round + 1}); ${e.stock_count} cards left in the stock`,
    play: (e) =>
      `${seatName(e.seat)} ${e.captured.length ? `takes ${e.captured.join(" ")} with ${e.card}` : `trails ${e.card}`}` +
      (e.bonus ? ` — tabla (+${e.bonus})` : "") + (e.auto ? " (timeout: played by the arena)" : ""),
    "deal-over": (e) => `deal ${e.deal + 1} over: ${e.score.map((p, t) => `${teamName(t)} ${p}`).join(", ")}`,
    hands: (e) => `deal ${e.deal + 1} hands: ` + e.hands.map((round) => round.map((c, s) => `${seatName(s)} ${c.join(" ")}`).join("; ")).join(" | "),
  };

  function onEvent(kind, msg) {
    const e = JSON.parse(msg.data);
    const [a] = (msg.lastEventId || "0-0").split("-");
    if (attempt !== null && a !== attempt) {
      clear($id("log"));
      log("the match was started again (an arena fault): from its first deal", "live-restart");
    }
    attempt = a;
    $id("event-id").textContent = `event ${msg.lastEventId}`;
    if ("table" in e) draw(e);
    if (describe[kind]) log(describe[kind](e), `live-${kind}`);
    $id("state").textContent = kind === "play" ? `deal ${e.deal + 1} · playing` : `deal ${(e.deal || 0) + 1} · ${kind}`;
  }

  async function main() {
    try {
      const m = await TA.fetchJSON(urls.api(`/leagues/${encodeURIComponent(leagueId)}/matches/${matchId.split("/").map(encodeURIComponent).join("/")}`));
      players = m.seats || [];
      teams = players.map((_, s) => [s]);
      $id("title").textContent = players.join(" vs ");
      if (m.live_held) {  // another game of its deal is not over: its cards would tell what is hidden there
        $id("state").textContent = `held back: ${m.live_held.why}; it can be watched once ${m.live_held.until}`;
        TA.ready();
        return;
      }
    } catch (err) {
      TA.showError(err);
      TA.ready();
      return;
    }
    const source = new EventSource(urls.api(`/leagues/${encodeURIComponent(leagueId)}/live/${matchId.split("/").map(encodeURIComponent).join("/")}`));
    for (const kind of ["deal", "round", "play", "deal-over", "hands"]) source.addEventListener(kind, (msg) => onEvent(kind, msg));
    source.addEventListener("over", (msg) => {
      onEvent("over", msg);
      const e = JSON.parse(msg.data);
      source.close();
      const winner = e.winner === null ? "a draw" : `${teamName(e.winner)} won`;
      $id("state").textContent = `over: ${winner} (${e.scores.join(" – ")})`;
      $id("sub").append(el("a", { href: urls.replay(leagueId, matchId), "data-testid": "live-replay", text: "replay it ▸" }));
    });
    source.addEventListener("finished", () => {
      source.close();
      location.replace(urls.replay(leagueId, matchId));
    });
    source.addEventListener("dropped", () => log("fell behind: reconnecting", "live-dropped"));
    source.onopen = () => TA.ready();
    source.onerror = () => {
      if (source.readyState === EventSource.CLOSED) $id("state").textContent = "disconnected";
    };
  }

  main();
})();
