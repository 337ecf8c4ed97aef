/* The replay viewer: steps through the frames the rules engine computed from a match record. */
"use strict";

(() => {
  const { el, clear, urls } = TA;
  // A replay written to a file by `tablanette replay` carries its data (no server, no other page).
  const embedded = window.TA_REPLAY || null;
  if (!embedded) TA.header("leagues");

  const parts = TA.pathParts(); // ["leagues", league, "replay", ...match id]
  const leagueId = embedded ? "" : parts[1] || "";
  const matchId = embedded ? String(embedded.record.id || "") : parts.slice(3).join("/");
  const apiUrl = urls.api(
    `/leagues/${encodeURIComponent(leagueId)}/replays/${matchId.split("/").map(encodeURIComponent).join("/")}`,
  );
  const botUrl = (name) => (embedded ? null : urls.bot(leagueId, name));

  document.title = `Replay ${matchId} · Tablanette Arena`;
  document.getElementById("crumbs").append(
    TA.crumbs(
      embedded
        ? [[embedded.source, null], [`replay ${matchId}`, null]]
        : [["Leagues", urls.home()], [leagueId, urls.league(leagueId)], [`replay ${matchId}`, null]],
    ),
  );

  const $id = (id) => document.getElementById(id);
  let record = null;
  let frames = [];
  let info = []; // per frame: {deal, toMove, actor, playNo, playsInDeal, round}
  let dealStarts = []; // frame index where each deal starts
  let current = 0;
  let timer = null;
  let logDeal = -1;

  // ------------------------------------------------------------------ names and rules

  const players = () => record.players; // what played: name@version as the record has it
  let seats = null; // the league's name of each seat's bot (a hosted version keeps its @N), when the arena says
  const seatName = (s) => (seats && seats[s]) || TA.botName(players()[s]);
  const teams = () => record.teams || players().map((_, s) => [s]);
  const teamOf = (seat) => TA.teamOf(seat, teams());
  const teamName = (t) => (teams()[t] || [t]).map(seatName).join(" & ");
  const partnerships = () => teams().some((t) => t.length > 1);

  const isPisti = (f) => Boolean(f.pisti); // decided by the rules engine (web/replay.py)

  // ------------------------------------------------------------------ frame index

  function index() {
    info = [];
    dealStarts = [];
    const n = players().length;
    const playsPerDeal = {};
    for (const f of frames) if (f.kind === "play") playsPerDeal[f.deal] = (playsPerDeal[f.deal] || 0) + 1;
    let toMove = null;
    let round = 0;
    let deal = 0;
    frames.forEach((f, i) => {
      let actor = null;
      if (f.deal !== undefined) deal = f.deal;
      if (f.kind === "deal") {
        dealStarts[f.deal] = i;
        toMove = (f.dealer + 1) % n;
        round = 0;
      } else if (f.kind === "play") {
        actor = f.seat;
        toMove = (f.seat + 1) % n;
      } else if (f.kind === "round") {
        round = f.round;
      } else {
        toMove = null;
      }
      const handsLeft = f.hands ? f.hands.some((h) => h.length) : false;
      info.push({
        deal,
        round,
        actor,
        toMove: handsLeft ? toMove : null,
        playNo: f.kind === "play" ? f.play + 1 : null,
        playsInDeal: playsPerDeal[deal] || 0,
      });
    });
  }

  function counterText(i) {
    const f = frames[i];
    const inf = info[i];
    const d = `Deal ${inf.deal + 1}`;
    switch (f.kind) {
      case "deal":
        return `${d} · dealt`;
      case "play":
        return `${d} · play ${inf.playNo} of ${inf.playsInDeal}`;
      case "round":
        return `${d} · round ${f.round + 1} dealt`;
      case "end":
        return `${d} · deal over`;
      default:
        return "Match over";
    }
  }

  // ------------------------------------------------------------------ rendering

  function seatBox(f, i, s) {
    const inf = info[i];
    const hand = f.hands ? f.hands[s] : [];
    const t = teamOf(s);
    const toMove = inf.toMove === s;
    const acted = inf.actor === s;
    const pile = f.pile_counts ? f.pile_counts[t] : null;
    return el(
      "div",
      {
        class: `seat s${s}` + (toMove ? " to-move" : "") + (acted ? " acted" : ""),
        "data-testid": `hand-${s}`,
        "data-seat": s,
        "data-to-move": toMove ? "true" : "false",
        "aria-label": `seat ${s}: ${players()[s]}`,
      },
      el(
        "div",
        { class: "seat-head" },
        el("a", { class: "name", href: botUrl(seatName(s)), title: players()[s], text: seatName(s) }),
        el("span", { class: "meta", text: `seat ${s}` + (partnerships() ? ` · team ${t + 1}` : "") }),
        pile !== null ? el("span", { class: "meta", title: "cards captured this deal", text: `· ${pile} captured` }) : null,
        toMove ? el("span", { class: "turn", "data-testid": "to-move", text: "to move" }) : null,
        acted ? el("span", { class: "turn just", text: "played" }) : null,
      ),
      TA.cards(hand, { empty: f.kind === "result" ? "—" : "no cards", testid: `hand-cards-${s}` }),
    );
  }

  function lastPlay(f, i) {
    const box = el("div", { class: "last-play", "data-testid": "last-play", "aria-live": "polite" });
    if (f.kind === "play") {
      const who = el("span", { class: "who", text: seatName(f.seat) });
      const played = TA.card(f.card, { cls: "played", testid: "played-card" });
      if (f.captured.length === 0) {
        box.append(who, el("span", { class: "note", text: "trails" }), played);
      } else {
        box.append(
          who,
          el("span", { class: "note", text: "plays" }),
          played,
          el("span", { class: "arrow", "aria-hidden": "true", text: "→" }),
          el("span", { class: "note", text: "takes" }),
          TA.cards(f.captured, { cls: "captured", testid: "captured", inline: true }),
        );
      }
      if (f.tabla) box.append(el("span", { class: "mark tabla", "data-testid": "tabla-mark", title: "the table was swept clean", text: "TABLA" }));
      if (isPisti(f)) box.append(el("span", { class: "mark pisti", "data-testid": "pisti-mark", text: "PİŞTİ" }));
      if (f.bonus) box.append(el("span", { class: "mark bonus", "data-testid": "bonus", text: `+${f.bonus} point${f.bonus > 1 ? "s" : ""}` }));
      if (f.auto) box.append(el("span", { class: "mark auto", "data-testid": "auto-mark", title: "the engine played for this seat (timeout or disconnect)", text: "auto-played" }));
    } else if (f.kind === "deal") {
      box.append(
        el("span", { class: "note" }, el("b", { text: seatName(f.dealer) }), ` deals (deal ${f.deal + 1}). `, el("b", { text: seatName(info[i].toMove ?? 0) }), " plays first."),
      );
    } else if (f.kind === "round") {
      box.append(el("span", { class: "note", text: `New round: ${f.hands[0].length} cards to each player.` }));
    } else if (f.kind === "end") {
      const lo = f.leftover || {};
      if (lo.cards && lo.cards.length) {
        box.append(
          el("span", { class: "note", text: "Deal over. Left on the table:" }),
          TA.cards(lo.cards, { cls: "leftover", inline: true, testid: "leftover" }),
          el("span", { class: "note", text: lo.team === null || lo.team === undefined ? "taken by nobody" : `→ ${teamName(lo.team)}` }),
        );
      } else {
        box.append(el("span", { class: "note", text: "Deal over. The table is empty." }));
      }
    } else {
      box.append(el("span", { class: "note", text: "Match over." }));
    }
    return box;
  }

  function renderBoard(i) {
    const f = frames[i];
    const board = $id("board");
    const n = players().length;
    board.className = `board p${n}`;
    const table = f.table || [];
    const trailed = f.kind === "play" && f.captured.length === 0 ? new Set([f.card]) : null;
    const felt = el(
      "div",
      { class: "felt" },
      el(
        "div",
        { class: "label" },
        el("span", { text: f.kind === "end" ? "Table (cleared)" : "Table" }),
        el("span", { text: `${table.length} card${table.length === 1 ? "" : "s"}` }),
      ),
      TA.cards(table, { testid: "table", empty: "empty table", highlight: trailed, highlightCls: "trailed" }),
      lastPlay(f, i),
    );
    const seats = [];
    for (let s = 0; s < n; s++) seats.push(seatBox(f, i, s));
    clear(board).append(felt, ...seats);
  }

  function scoreRow(t, cells, cls) {
    return el(
      "tr",
      { class: cls || null, "data-team": t },
      el("td", { class: "team-name" }, (teams()[t] || [t]).map((seat, k) => [k ? " & " : null, el("span", { class: "nowrap", text: seatName(seat) })])),
      cells.map(([value, testid, extra]) => el("td", { class: `num ${extra || ""}`.trim(), "data-testid": testid, text: value })),
    );
  }

  function scoreTable(heads, rows) {
    return TA.wrapTable(
      el(
        "table",
        { class: "data score-table" },
        el("thead", null, el("tr", null, el("th", { text: partnerships() ? "Team" : "Player" }), heads.map((h) => el("th", { class: "num", text: h })))),
        el("tbody", null, rows),
      ),
    );
  }

  function renderScore(i) {
    const f = frames[i];
    const host = clear($id("score"));
    const nTeams = f.totals.length;
    host.dataset.kind = f.kind;
    const ts = [...Array(nTeams).keys()];
    if (f.kind === "end") {
      host.append(
        el("p", { class: "muted small", text: `Deal ${f.deal + 1} scored${f.complete === false ? " (unfinished)" : ""}:` }),
        scoreTable(
          ["Deal", "Total"],
          ts.map((t) => scoreRow(t, [[f.score[t], `deal-score-${t}`, "score-total"], [f.totals[t], `total-${t}`]])),
        ),
      );
      const lo = f.leftover || {};
      if (lo.cards && lo.cards.length) {
        host.append(
          el(
            "div",
            { class: "end-box" },
            el("span", { class: "muted", text: `Leftover (${lo.cards.length}) → ${lo.team === null || lo.team === undefined ? "nobody" : teamName(lo.team)}` }),
            TA.cards(lo.cards, { mini: true, inline: false }),
          ),
        );
      }
    } else if (f.kind === "result") {
      const r = f.result || record.result;
      const w = r.winner;
      host.append(
        el("p", { class: "muted small", text: "Final score:" }),
        scoreTable(["Total"], ts.map((t) => scoreRow(t, [[f.score[t], `total-${t}`, "score-total"]], w === t ? "winner" : null))),
      );
      let text;
      let cls = "";
      if (r.reason === "aborted") {
        text = "Match aborted";
        cls = "aborted";
      } else if (w === null || w === undefined) {
        text = `Draw · ${f.score.join(" – ")}`;
        cls = "draw";
      } else {
        const others = f.score.filter((_, t) => t !== w);
        text = `${teamName(w)} wins ${f.score[w]} – ${others.join(" – ")}`;
      }
      const why = { target: "target reached", deals: "all deals played", forfeit: "forfeit", aborted: "aborted" }[r.reason] || r.reason;
      const forfeit = r.forfeit_seat !== undefined && r.forfeit_seat !== null ? ` (${seatName(r.forfeit_seat)} forfeited)` : "";
      host.append(
        el("div", { class: `result-banner ${cls}`, "data-testid": "result", "data-winner": w === null || w === undefined ? "" : w }, text,
          el("div", { class: "small", style: "font-weight:400", text: why + forfeit })),
      );
    } else {
      const bonus = f.deal_bonus || ts.map(() => 0);
      host.append(
        el("p", { class: "muted small", text: `Before deal ${info[i].deal + 1}, plus this deal's bonus points (tabla, pişti) so far:` }),
        scoreTable(
          ["Total", "Bonus", "Cards"],
          ts.map((t) =>
            scoreRow(t, [
              [f.totals[t], `total-${t}`, "score-total"],
              [`+${bonus[t]}`, `bonus-${t}`],
              [f.pile_counts ? f.pile_counts[t] : "–", `pile-${t}`],
            ]),
          ),
        ),
      );
    }
  }

  function renderLog(i) {
    const deal = info[i].deal;
    const log = $id("log");
    if (deal !== logDeal) {
      logDeal = deal;
      clear(log);
      frames.forEach((f, k) => {
        if (f.kind !== "play" || f.deal !== deal) return;
        log.append(
          el(
            "li",
            { "data-frame": k },
            el(
              "button",
              { type: "button", onclick: () => go(k) },
              el("span", { class: "n", text: f.play + 1 }),
              el("span", { text: seatName(f.seat) }),
              TA.card(f.card, { mini: true }),
              f.captured.length ? [el("span", { class: "muted", text: "×" }), f.captured.map((c) => TA.card(c, { mini: true }))] : el("span", { class: "muted small", text: "trail" }),
              f.tabla ? el("span", { class: "tag", text: "TABLA" }) : null,
              isPisti(f) ? el("span", { class: "tag pisti", text: "PİŞTİ" }) : null,
              f.auto ? el("span", { class: "tag auto", title: "played by the engine", text: "auto" }) : null,
              f.bonus ? el("span", { class: "small delta-up", text: `+${f.bonus}` }) : null,
            ),
          ),
        );
      });
      $id("log-hint").textContent = `deal ${deal + 1}`;
    }
    for (const li of log.children) {
      const on = Number(li.dataset.frame) === i;
      li.classList.toggle("current", on);
      if (on) {
        const top = li.offsetTop - log.offsetTop;
        if (top < log.scrollTop || top > log.scrollTop + log.clientHeight - li.offsetHeight) {
          log.scrollTop = Math.max(0, top - log.clientHeight / 2);
        }
      }
    }
  }

  function scoreLine(i) {
    const f = frames[i];
    const ts = [...Array(f.totals.length).keys()];
    const item = (t, main, extra) => el("span", { class: "item" }, el("b", { text: teamName(t) }), ` ${main}`, extra ? el("span", { class: "muted", text: ` ${extra}` }) : null);
    if (f.kind === "end") return ts.map((t) => item(t, f.totals[t], `(deal ${f.score[t]})`));
    if (f.kind === "result") return ts.map((t) => item(t, f.score[t], f.result.winner === t ? "wins" : null));
    return ts.map((t) => item(t, f.totals[t], f.deal_bonus && f.deal_bonus[t] ? `+${f.deal_bonus[t]}` : null));
  }

  function render() {
    const i = current;
    $id("counter").textContent = counterText(i);
    $id("counter").dataset.frame = i;
    $id("counter").dataset.kind = frames[i].kind;
    $id("frame-index").textContent = `step ${i + 1} of ${frames.length}`;
    $id("scrubber").value = i;
    clear($id("score-line")).append(...scoreLine(i));
    renderBoard(i);
    renderScore(i);
    renderLog(i);
    $id("btn-first").disabled = $id("btn-prev").disabled = i === 0;
    $id("btn-last").disabled = $id("btn-next").disabled = i === frames.length - 1;
    $id("btn-prev-deal").disabled = i === 0;
    $id("btn-next-deal").disabled = i === frames.length - 1;
    document.body.dataset.frame = i;
  }

  // ------------------------------------------------------------------ navigation

  function go(i, keepPlaying) {
    if (!frames.length) return;
    current = Math.max(0, Math.min(frames.length - 1, i));
    if (!keepPlaying) stop();
    history.replaceState(null, "", `#frame=${current}`);
    render();
  }

  function prevDeal() {
    const start = dealStarts[info[current].deal];
    if (frames[current].kind === "result") go(dealStarts[dealStarts.length - 1]);
    else if (current > start) go(start);
    else go(dealStarts[Math.max(0, info[current].deal - 1)]);
  }

  function nextDeal() {
    const next = dealStarts[info[current].deal + 1];
    go(next !== undefined && frames[current].kind !== "result" ? next : frames.length - 1);
  }

  function setPlayButton(playing) {
    const b = $id("btn-play");
    const d = playing ? "M4 3h3v10H4zM9 3h3v10H9z" : "M4 2.5v11l9-5.5z";
    clear(b).append(TA.svg("svg", { class: "icon", viewBox: "0 0 16 16", "aria-hidden": "true" }, TA.svg("path", { d })), playing ? " Pause" : " Play");
    b.setAttribute("aria-pressed", playing ? "true" : "false");
  }

  function stop() {
    if (timer) clearInterval(timer);
    timer = null;
    setPlayButton(false);
  }

  function play() {
    if (current >= frames.length - 1) go(0);
    stop();
    setPlayButton(true);
    timer = setInterval(() => {
      if (current >= frames.length - 1) stop();
      else go(current + 1, true);
    }, Number($id("speed").value));
  }

  function toggle() {
    if (timer) stop();
    else play();
  }

  function bind() {
    $id("btn-first").addEventListener("click", () => go(0));
    $id("btn-prev").addEventListener("click", () => go(current - 1));
    $id("btn-next").addEventListener("click", () => go(current + 1));
    $id("btn-last").addEventListener("click", () => go(frames.length - 1));
    $id("btn-prev-deal").addEventListener("click", prevDeal);
    $id("btn-next-deal").addEventListener("click", nextDeal);
    $id("btn-play").addEventListener("click", toggle);
    $id("speed").addEventListener("change", () => {
      if (timer) play();
    });
    $id("scrubber").addEventListener("input", (e) => go(Number(e.target.value)));
    document.addEventListener("keydown", (e) => {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      const tag = e.target && e.target.tagName;
      if (tag === "SELECT" || (tag === "INPUT" && e.target.type !== "range")) return;
      const actions = {
        ArrowLeft: () => go(current - 1),
        ArrowRight: () => go(current + 1),
        Home: () => go(0),
        End: () => go(frames.length - 1),
        PageUp: prevDeal,
        PageDown: nextDeal,
      };
      if (e.key === " " && tag !== "BUTTON" && tag !== "A") actions[" "] = toggle;
      const action = actions[e.key];
      if (!action) return;
      e.preventDefault();
      action();
    });
    window.addEventListener("hashchange", () => {
      const i = frameFromHash();
      if (i !== null && i !== current) go(i);
    });
  }

  function frameFromHash() {
    const m = /frame=(\d+)/.exec(location.hash);
    return m ? Number(m[1]) : null;
  }

  // ------------------------------------------------------------------ luck

  /** The frame where a chance event's cards appear: the deal's first frame, or its round's. */
  function eventFrame(e) {
    const i = frames.findIndex((f) => f.deal === e.deal && (e.round === 0 ? f.kind === "deal" : f.kind === "round" && f.round === e.round));
    return i < 0 ? null : i;
  }

  function renderLuck(luck) {
    const host = clear($id("luck"));
    if (!luck || luck.skipped) {
      host.append(el("p", { class: "muted small", "data-testid": "luck-skipped", text: `No luck estimate: ${luck ? luck.skipped : "not available"}` }));
      return;
    }
    const ts = [...luck.raw.keys()];
    host.append(
      scoreTable(
        ["Raw", "Luck", "Skill"],
        ts.map((t) =>
          scoreRow(t, [
            [TA.signed(luck.raw[t]), `raw-${t}`],
            [TA.signed(luck.luck[t]), `luck-${t}`],
            [TA.signed(luck.skill[t]), `skill-${t}`, "score-total"],
          ]),
        ),
      ),
    );
    const points = luck.events.map((e, k) => {
      const at = eventFrame(e);
      const when = `deal ${e.deal + 1}, ${e.round === 0 ? "table and first hands" : `hands of round ${e.round + 1}`}`;
      return {
        x: k + 1,
        y: e.luck[0],
        title: `${when}: ${TA.signed(e.correction[0])} for ${teamName(0)}, luck so far ${TA.signed(e.luck[0])}`,
        href: at === null ? null : `#frame=${at}`,
      };
    });
    points.unshift({ x: 0, y: 0, title: "before the first deal" });
    host.append(
      TA.lineChart(points, {
        width: 360,
        height: 200,
        testid: "luck-curve",
        baseline: 0,
        xLabel: "deals of cards",
        label: `luck of ${teamName(0)} so far, in points, after each deal of cards`,
      }),
      el("p", { class: "muted small", text: `The curve: ${teamName(0)}'s luck so far after each deal of cards (${luck.samples} sampled deals each); click a point to see those cards.` }),
    );
  }

  // ------------------------------------------------------------------ load

  async function main() {
    let data;
    try {
      data = embedded || (await TA.load(apiUrl));
    } catch (_) {
      $id("counter").textContent = "No replay";
      TA.ready();
      return;
    }
    record = data.record;
    frames = data.frames;
    seats = data.seats && data.seats.length === record.players.length ? data.seats : null;
    index();
    const names = teams().map((_, t) => teamName(t));
    $id("title").textContent = names.join(" vs ");
    const rules = Object.entries(record.rules).map(([k, v]) => (k === "preset" ? v : `${k}=${typeof v === "object" ? JSON.stringify(v) : v}`));
    $id("sub").append(
      el(
        "span",
        null,
        `Match ${matchId} · rules ${rules.join(", ")} · ${dealStarts.length} deal(s) · seed `,
        el("code", { text: record.seed }),
        " · seats: ",
        players().map((p, s) => [s ? ", " : null, el("a", { href: botUrl(seatName(s)), title: p, "data-testid": "seat-link", text: `${s} ${p}` })]),
      ),
    );
    $id("scrubber").max = frames.length - 1;
    renderLuck(data.luck);
    bind();
    setPlayButton(false);
    const start = frameFromHash();
    current = start !== null ? Math.min(start, frames.length - 1) : 0;
    render();
    TA.ready();
  }

  main();
})();
