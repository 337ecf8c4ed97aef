/* Tablanette Arena: helpers shared by every page (no framework, no build step).
 *
 * Everything hangs off the global `TA`: DOM building, JSON fetching with a
 * visible error, card rendering, formatting, SVG sparkline and line chart,
 * the site header, a sortable table and the URL scheme of the pages.
 */
"use strict";

const TA = (() => {
  const SVG_NS = "http://www.w3.org/2000/svg";

  // ------------------------------------------------------------------ DOM

  /** el("a", {href: "/", class: "x", "data-testid": "y", onclick: fn}, "text", node, [more]) */
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function svg(tag, attrs, ...children) {
    const node = document.createElementNS(SVG_NS, tag);
    setAttrs(node, attrs);
    append(node, children);
    return node;
  }

  function setAttrs(node, attrs) {
    if (!attrs) return;
    for (const [key, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "text") node.textContent = String(value);
      else if (key.startsWith("on") && typeof value === "function") node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
  }

  function append(node, children) {
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
    return node;
  }

  function $(selector, root) {
    return (root || document).querySelector(selector);
  }

  // ------------------------------------------------------------------ URLs

  const enc = encodeURIComponent;
  const encPath = (p) => String(p).split("/").map(enc).join("/");

  const urls = {
    home: () => "/",
    league: (league) => `/leagues/${enc(league)}`,
    bot: (league, bot) => `/leagues/${enc(league)}/bots/${enc(bot)}`,
    hosted: (bot) => `/bots/${enc(bot)}`, // any bot's own page, connected or hosted
    version: (name) => {
      const at = String(name).lastIndexOf("@");
      return `/bots/${enc(name.slice(0, at))}/versions/${enc(name.slice(at + 1))}`;
    },
    live: (league, match) => `/leagues/${enc(league)}/live/${encPath(match)}`,
    replay: (league, match, frame) =>
      `/leagues/${enc(league)}/replay/${encPath(match)}` + (frame !== undefined ? `#frame=${frame}` : ""),
    api: (path) => `/api${path}`,
  };

  /** The decoded segments of the page's path: /leagues/a/bots/b -> ["leagues", "a", "bots", "b"]. */
  function pathParts() {
    return location.pathname.split("/").filter(Boolean).map((s) => {
      try {
        return decodeURIComponent(s);
      } catch (_) {
        return s;
      }
    });
  }

  // ------------------------------------------------------------------ fetch

  class ApiError extends Error {
    constructor(url, status, detail) {
      super(`${detail} (HTTP ${status} from ${url})`);
      this.status = status;
      this.detail = detail;
    }
  }

  async function fetchJSON(url, options) {
    let res;
    try {
      res = await fetch(url, { headers: { Accept: "application/json" }, ...options });
    } catch (err) {
      throw new ApiError(url, 0, `network error: ${err.message}`);
    }
    let body = null;
    try {
      body = await res.json();
    } catch (_) {
      body = null;
    }
    if (!res.ok) {
      let detail = res.statusText || "request failed";
      if (body && body.detail) detail = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
      throw new ApiError(url, res.status, detail);
    }
    return body;
  }

  /** Fetch JSON; on failure show the error on the page (then rethrow). */
  async function load(url, options) {
    try {
      return await fetchJSON(url, options);
    } catch (err) {
      showError(err);
      throw err;
    }
  }

  function showError(err) {
    let box = document.getElementById("errors");
    if (!box) {
      box = el("div", { id: "errors", class: "error-box", role: "alert" });
      const main = document.querySelector("main") || document.body;
      main.prepend(box);
    }
    const msg = err instanceof Error ? err.message : String(err);
    if ([...box.children].some((c) => c.textContent === msg)) return;
    box.append(el("div", { "data-testid": "error", text: msg }));
  }

  function clearErrors() {
    const box = document.getElementById("errors");
    if (box) clear(box);
  }

  // ------------------------------------------------------------------ the account (a web session)

  let sessionAsked = null;

  /** Who is logged in in this browser: {account: {name, ...}, csrf} or {account: null}; asked once a page
   *  (fresh: ask again). GET /api/session answers 200 either way, so no page logs a refusal for a visitor. */
  function session(fresh) {
    if (!sessionAsked || fresh) sessionAsked = fetchJSON(urls.api("/session")).catch(() => ({ account: null }));
    return sessionAsked;
  }

  /** A call that changes something, by this browser's session: with its CSRF token (X-CSRF-Token), a JSON
   *  body (or a Blob as it is). Throws ApiError whose .detail is the API's own words. */
  async function send(method, path, body, type) {
    const s = await session();
    const headers = { Accept: "application/json", "X-CSRF-Token": s.csrf || "" };
    let payload = body;
    if (body !== undefined && !(body instanceof Blob)) {
      headers["Content-Type"] = "application/json";
      payload = JSON.stringify(body);
    } else if (type) {
      headers["Content-Type"] = type;
    }
    return fetchJSON(urls.api(path), { method, headers, body: payload });
  }

  /** What to show of a failed call: the API's detail, else the error's message. */
  function reason(err) {
    return err && err.detail !== undefined ? String(err.detail) : err instanceof Error ? err.message : String(err);
  }

  // ------------------------------------------------------------------ cards

  const SUITS = {
    C: { sym: "\u2663", name: "clubs", color: "black" },
    D: { sym: "\u2666", name: "diamonds", color: "red" },
    H: { sym: "\u2665", name: "hearts", color: "red" },
    S: { sym: "\u2660", name: "spades", color: "black" },
  };
  const RANK_NAMES = { A: "ace", T: "10", J: "jack", Q: "queen", K: "king" };
  const TEXT_STYLE = "\uFE0E"; // ask for the text (not emoji) form of the suit symbol

  function parseCard(code) {
    const c = String(code).toUpperCase().replace(/^10/, "T");
    return { rank: c.slice(0, -1), suit: c.slice(-1) };
  }

  function rankLabel(rank) {
    return rank === "T" ? "10" : rank;
  }

  function cardText(code) {
    const { rank, suit } = parseCard(code);
    return rankLabel(rank) + (SUITS[suit] ? SUITS[suit].sym : suit);
  }

  function cardName(code) {
    const { rank, suit } = parseCard(code);
    const r = RANK_NAMES[rank] || rank;
    return `${r} of ${SUITS[suit] ? SUITS[suit].name : suit}`;
  }

  /** A card as a small rounded box: rank over suit, red for hearts/diamonds. opts: {mini, cls, testid} */
  function card(code, opts = {}) {
    const { rank, suit } = parseCard(code);
    const info = SUITS[suit] || { sym: suit, color: "black" };
    const classes = ["card", info.color];
    if (opts.mini) classes.push("mini");
    if (opts.cls) classes.push(...[].concat(opts.cls));
    return el(
      "span",
      {
        class: classes.join(" "),
        "data-card": `${rank}${suit}`,
        "data-testid": opts.testid,
        title: cardName(code),
        role: "img",
        "aria-label": cardName(code),
      },
      el("span", { class: "rank", "aria-hidden": "true", text: rankLabel(rank) }),
      el("span", { class: "suit", "aria-hidden": "true", text: info.sym + TEXT_STYLE }),
    );
  }

  /** A row of cards (or an "empty" note). opts as card() plus {highlight: Set, highlightCls, empty, inline} */
  function cards(codes, opts = {}) {
    const box = el("div", { class: "cards" + (opts.inline ? " inline" : ""), "data-testid": opts.testid });
    if (!codes || codes.length === 0) {
      const note = opts.empty === undefined ? "empty" : opts.empty;
      if (note) box.append(el("span", { class: "empty", text: note }));
      return box;
    }
    for (const code of codes) {
      const hl = opts.highlight && opts.highlight.has(code);
      box.append(card(code, { mini: opts.mini, cls: hl ? opts.highlightCls || "captured" : opts.cls }));
    }
    return box;
  }

  // ------------------------------------------------------------------ formatting

  function num(x, digits = 0) {
    if (x === null || x === undefined || Number.isNaN(x)) return "–";
    return Number(x).toLocaleString("en-US", {
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
      useGrouping: Math.abs(x) >= 10000,
    });
  }

  function signed(x, digits = 1) {
    if (x === null || x === undefined) return "–";
    const s = num(Math.abs(x), digits);
    if (Number(s) === 0 || s === num(0, digits)) return "±" + s;
    return (x > 0 ? "+" : "\u2212") + s;
  }

  function pad(n) {
    return String(n).padStart(2, "0");
  }

  /** A Unix time: HH:MM:SS today, else YYYY-MM-DD HH:MM. */
  function time(ts) {
    if (!ts) return "–";
    const d = new Date(ts * 1000);
    const now = new Date();
    const hms = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
    if (d.toDateString() === now.toDateString()) return hms;
    return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
  }

  /** An x-tick label for Unix times: a day's date; the time of day when the span is under two days, with
   * seconds under ten minutes. */
  function timeTick(span) {
    return (ts) => {
      const d = new Date(ts * 1000);
      if (span >= 2 * 86400) return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
      const hm = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
      return span < 600 ? `${hm}:${pad(d.getSeconds())}` : hm;
    };
  }

  function fullTime(ts) {
    return ts ? new Date(ts * 1000).toString() : "";
  }

  /** Seconds as "45 s", "3 min 20 s", "2 h 05 min". */
  function duration(seconds) {
    if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "–";
    const s = Math.max(0, Math.round(seconds));
    if (s < 60) return `${s} s`;
    if (s < 3600) return `${Math.floor(s / 60)} min ${pad(s % 60)} s`;
    return `${Math.floor(s / 3600)} h ${pad(Math.floor((s % 3600) / 60))} min`;
  }

  /** "strong@1.2" -> "strong" (records name players with their version). */
  function botName(player) {
    const s = String(player);
    const at = s.indexOf("@");
    return at > 0 ? s.slice(0, at) : s;
  }

  function badge(status) {
    return el("span", { class: `badge ${status}`, "data-testid": "status", text: status });
  }

  // ------------------------------------------------------------------ results

  /** The team of `seat` given the league's `teams` (seats per side); one seat per team by default. */
  function teamOf(seat, teams) {
    if (teams) {
      const t = teams.findIndex((side) => side.includes(seat));
      if (t >= 0) return t;
    }
    return seat;
  }

  /** A match row seen by `bot`: its seat, team, W/D/L, its score and the others', Elo change. */
  function matchFor(match, bot, teams) {
    const seat = match.seats.indexOf(bot);
    const team = teamOf(seat, teams);
    let letter = null;
    if (match.result && seat >= 0) {
      const w = match.result.winner;
      letter = w === null || w === undefined ? "D" : w === team ? "W" : "L";
    }
    const score = match.score || null;
    const mine = score ? score[team] : null;
    const others = score ? score.filter((_, i) => i !== team) : [];
    const opponents = match.seats.filter((_, s) => s !== seat && teamOf(s, teams) !== team);
    const partners = match.seats.filter((_, s) => s !== seat && teamOf(s, teams) === team);
    const elo = match.elo && seat >= 0 ? match.elo[seat] : null;
    return { seat, team, letter, mine, others, opponents, partners, elo };
  }

  /** A match row's score as the bot of ``v`` (matchFor) sees it: its side's first, "–" with none. */
  function scoreText(v) {
    return v.mine === null || v.mine === undefined ? "–" : `${v.mine} – ${v.others.join(" – ")}`;
  }

  /** A match row's result for the bot of ``v``: its state while not done, else W / D / L (its reason as title). */
  function resultCell(m, v) {
    if (m.status !== "done") return badge(m.status);
    if (v.letter) return el("span", { class: `res ${v.letter}`, "data-testid": "result", title: m.result.reason, text: v.letter });
    return "–";
  }

  // ------------------------------------------------------------------ charts

  /** A small SVG line of `values` (e.g. the last 30 ratings). */
  function sparkline(values, opts = {}) {
    const w = opts.width || 110;
    const h = opts.height || 26;
    const pad = 3;
    const node = svg("svg", {
      class: "spark",
      width: w,
      height: h,
      viewBox: `0 0 ${w} ${h}`,
      role: "img",
      "data-testid": opts.testid || "sparkline",
      "data-points": values.length,
    });
    if (!values || values.length === 0) return node;
    const first = values[0];
    const last = values[values.length - 1];
    node.classList.add(last > first ? "up" : last < first ? "down" : "flat");
    const label = `rating trend: ${num(first)} → ${num(last)} over ${values.length} game(s)`;
    node.setAttribute("aria-label", label);
    node.append(svg("title", { text: label }));
    const lo = Math.min(...values);
    const hi = Math.max(...values);
    const span = hi - lo || 1;
    const x = (i) => (values.length === 1 ? w / 2 : pad + (i * (w - 2 * pad)) / (values.length - 1));
    const y = (v) => (hi === lo ? h / 2 : h - pad - ((v - lo) * (h - 2 * pad)) / span);
    const d = values.map((v, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    node.append(svg("path", { class: "line", d }));
    node.append(svg("circle", { class: "dot", cx: x(values.length - 1), cy: y(last), r: 2.4 }));
    return node;
  }

  /** "Nice" tick values covering [lo, hi]. */
  function ticks(lo, hi, count) {
    if (hi === lo) return [lo];
    const raw = (hi - lo) / Math.max(1, count);
    const mag = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) || raw;
    const out = [];
    for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(Number(v.toFixed(6)));
    return out;
  }

  /**
   * An SVG line chart. points: [{x, y, title?, href?}]; opts: {width, height, baseline, xLabel, label, testid,
   * xFormat}. Scales with its container (viewBox), so it fits a phone as well as a desktop.
   */
  const BAND_REACH = 400;

  /** The closed path of an interval band: along the points' hi, back along their lo (an end null: the edge). */
  function bandPath(pts, sx, sy, top, bottom) {
    const y = (v, edge) => (v === null || v === undefined ? edge : Math.min(bottom, Math.max(top, sy(v))));
    const upper = pts.map((p) => `${sx(p.x).toFixed(1)},${y(p.hi, top).toFixed(1)}`);
    const lower = pts.map((p) => `${sx(p.x).toFixed(1)},${y(p.lo, bottom).toFixed(1)}`).reverse();
    return `M${upper.join(" L")} L${lower.join(" L")} Z`;
  }

  function lineChart(points, opts = {}) {
    return seriesChart([{ points }], opts);
  }

  /**
   * An SVG chart of several lines on shared axes: series [{label?, band?, points: [{x, y, lo?, hi?, title?,
   * href?}]}]; the options of lineChart. One line gets a shaded area, or with band: true the band between its
   * points' lo and hi (an interval; lo or hi null: to the chart's edge, and a band reaching far past the line
   * is cut at BAND_REACH beyond it); several get a colour each (series-0 … series-5) and a legend.
   * xFormat(x) labels the x ticks (default: whole numbers only).
   */
  function seriesChart(series, opts = {}) {
    const W = opts.width || 720;
    const H = opts.height || 260;
    const all = series.flatMap((s) => s.points);
    const legendRows = series.length > 1 ? Math.ceil(series.length / 3) : 0;
    const m = { top: 12 + 16 * legendRows, right: 16, bottom: 34, left: 52 };
    const node = svg("svg", {
      class: "chart",
      viewBox: `0 0 ${W} ${H}`,
      preserveAspectRatio: "xMidYMid meet",
      role: "img",
      "aria-label": opts.label || "chart",
      "data-testid": opts.testid || "chart",
      "data-points": all.length,
      "data-series": series.length,
    });
    if (all.length === 0) {
      node.append(svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "tick", text: "no data yet" }));
      return node;
    }
    const ys = all.map((p) => p.y);
    if (opts.baseline !== undefined) ys.push(opts.baseline);
    const [lineLo, lineHi] = [Math.min(...ys), Math.max(...ys)];
    for (const s of series.filter((x) => x.band)) {
      for (const p of s.points) {
        for (const v of [p.lo, p.hi]) if (v !== null && v !== undefined) ys.push(Math.min(lineHi + BAND_REACH, Math.max(lineLo - BAND_REACH, v)));
      }
    }
    let lo = Math.min(...ys);
    let hi = Math.max(...ys);
    const padY = Math.max((hi - lo) * 0.08, 5);
    lo -= padY;
    hi += padY;
    const xs = all.map((p) => p.x);
    const x0 = Math.min(...xs);
    const x1 = Math.max(...xs) === x0 ? x0 + 1 : Math.max(...xs);
    const sx = (x) => m.left + ((x - x0) * (W - m.left - m.right)) / (x1 - x0);
    const sy = (y) => H - m.bottom - ((y - lo) * (H - m.top - m.bottom)) / (hi - lo);

    for (const t of ticks(lo, hi, H < 240 ? 4 : 5)) {
      node.append(svg("line", { class: "grid", x1: m.left, x2: W - m.right, y1: sy(t), y2: sy(t) }));
      node.append(svg("text", { class: "tick", x: m.left - 6, y: sy(t) + 4, "text-anchor": "end", text: num(t) }));
    }
    const xFormat = opts.xFormat || num;
    const maxTicks = Math.max(2, Math.floor((W - m.left - m.right) / (opts.xFormat ? 110 : 60)));
    const xt = opts.xFormat
      ? ticks(x0, x1, maxTicks)
      : ticks(x0, x1, Math.min(maxTicks, Math.max(1, Math.round(x1 - x0)))).filter((t) => Number.isInteger(t));
    for (const t of xt) {
      node.append(svg("text", { class: "tick", x: sx(t), y: H - m.bottom + 16, "text-anchor": "middle", text: xFormat(t) }));
    }
    node.append(svg("line", { class: "axis", x1: m.left, x2: W - m.right, y1: H - m.bottom, y2: H - m.bottom }));
    node.append(svg("line", { class: "axis", x1: m.left, x2: m.left, y1: m.top, y2: H - m.bottom }));
    if (opts.xLabel) {
      node.append(svg("text", { class: "tick", x: (W + m.left) / 2, y: H - 4, "text-anchor": "middle", text: opts.xLabel }));
    }
    if (opts.baseline !== undefined) {
      node.append(svg("line", { class: "base", x1: m.left, x2: W - m.right, y1: sy(opts.baseline), y2: sy(opts.baseline) }));
    }
    const bottom = H - m.bottom;
    series.forEach((s, k) => {
      const pts = s.points;
      if (pts.length === 0) return;
      const cls = series.length > 1 ? ` series-${k % 6}` : "";
      const d = pts.map((p, i) => `${i ? "L" : "M"}${sx(p.x).toFixed(1)},${sy(p.y).toFixed(1)}`).join(" ");
      if (s.band) {
        node.append(svg("path", { class: "band", d: bandPath(pts, sx, sy, m.top, bottom), "data-testid": "chart-band" }));
      } else if (series.length === 1) {
        const area = `${d} L${sx(pts[pts.length - 1].x).toFixed(1)},${bottom} L${sx(pts[0].x).toFixed(1)},${bottom} Z`;
        node.append(svg("path", { class: "area", d: area }));
      }
      node.append(svg("path", { class: "line" + cls, d, "data-testid": "chart-line", "data-series": s.label || "" }));
      if (all.length <= 80 || pts.length === 1) {
        for (const p of pts) {
          const dot = svg("circle", { class: "pt" + cls, cx: sx(p.x), cy: sy(p.y), r: 3.5 }, p.title ? svg("title", { text: p.title }) : null);
          node.append(p.href ? svg("a", { href: p.href }, dot) : dot);
        }
      }
    });
    if (legendRows) {
      const colW = (W - m.left - m.right) / 3;
      series.forEach((s, k) => {
        const lx = m.left + (k % 3) * colW;
        const ly = 12 + 16 * Math.floor(k / 3);
        node.append(svg("line", { class: `line series-${k % 6}`, x1: lx, x2: lx + 18, y1: ly - 4, y2: ly - 4 }));
        node.append(svg("text", { class: "tick legend", x: lx + 24, y: ly, "data-testid": "chart-legend", text: s.label || "" }));
      });
    }
    return node;
  }

  // ------------------------------------------------------------------ progress

  function progressBar(p, small) {
    const total = Math.max(p.total || 0, 1);
    const pct = (n) => `${((100 * (n || 0)) / total).toFixed(2)}%`;
    return el(
      "div",
      {
        class: "progress-bar" + (small ? " small" : ""),
        role: "progressbar",
        "aria-valuemin": 0,
        "aria-valuemax": p.total || 0,
        "aria-valuenow": p.done || 0,
        title: `${p.done || 0} of ${p.total || 0} done` + (p.failed ? `, ${p.failed} failed` : ""),
      },
      el("div", { class: "done", style: `width:${pct(p.done)}` }),
      el("div", { class: "failed", style: `width:${pct(p.failed)}` }),
      el("div", { class: "running", style: `width:${pct(p.running)}` }),
    );
  }

  // ------------------------------------------------------------------ sortable table

  /**
   * A table sortable by clicking its column headers.
   * columns: [{key, label, num?, sortable? (default true), value(row), render(row) -> node|string, title?}]
   * opts: {rowAttrs(row) -> attrs, sort: {key, dir}, testid}
   */
  function sortableTable(columns, rows, opts = {}) {
    let sort = opts.sort || { key: columns[0].key, dir: 1 };
    const table = el("table", { class: "data", "data-testid": opts.testid });
    const thead = el("thead");
    const tbody = el("tbody");
    table.append(thead, tbody);

    const valueOf = (col, row) => (col.value ? col.value(row) : row[col.key]);

    function compare(a, b) {
      const col = columns.find((c) => c.key === sort.key);
      const va = valueOf(col, a);
      const vb = valueOf(col, b);
      let r;
      if (typeof va === "number" && typeof vb === "number") r = va - vb;
      else r = String(va).localeCompare(String(vb), "en", { numeric: true, sensitivity: "base" });
      return r * sort.dir || (a.__i - b.__i);
    }

    function renderHead() {
      clear(thead);
      const tr = el("tr");
      for (const col of columns) {
        const sortable = col.sortable !== false;
        const active = sort.key === col.key;
        const th = el("th", {
          class: [col.num ? "num" : "", sortable ? "sortable" : ""].join(" ").trim() || null,
          scope: "col",
          title: col.title,
          "data-col": col.key,
          "aria-sort": sortable ? (active ? (sort.dir > 0 ? "ascending" : "descending") : "none") : null,
        });
        if (sortable) {
          th.append(
            el(
              "button",
              {
                type: "button",
                "data-testid": `sort-${col.key}`,
                onclick: () => {
                  if (sort.key === col.key) sort = { key: col.key, dir: -sort.dir };
                  else sort = { key: col.key, dir: col.defaultDir || 1 };
                  render();
                },
              },
              col.label,
              el("span", { class: "arrow", "aria-hidden": "true", text: active ? (sort.dir > 0 ? "▲" : "▼") : "↕" }),
            ),
          );
        } else {
          th.textContent = col.label;
        }
        tr.append(th);
      }
      thead.append(tr);
    }

    function render(newRows) {
      if (newRows) rows = newRows.map((r, i) => ({ ...r, __i: i }));
      renderHead();
      clear(tbody);
      for (const row of [...rows].sort(compare)) {
        const tr = el("tr", opts.rowAttrs ? opts.rowAttrs(row) : null);
        for (const col of columns) {
          const content = col.render ? col.render(row) : valueOf(col, row);
          tr.append(el("td", { class: col.num ? "num" : null, "data-col": col.key }, content));
        }
        tbody.append(tr);
      }
    }

    rows = rows.map((r, i) => ({ ...r, __i: i }));
    render();
    return { table, render, get sort() { return sort; } };
  }

  function wrapTable(table, fit) {
    return el("div", { class: "table-wrap" + (fit ? " fit" : "") }, table);
  }

  // ------------------------------------------------------------------ page chrome

  function header(active) {
    const nav = [
      ["leagues", "/", "Leagues"],
      ["bots", "/#hosted", "Hosted bots"],
      ["api", "/api", "API"],
    ];
    const host = document.getElementById("site-header");
    if (!host) return;
    host.className = "site-header";
    clear(host).append(
      el(
        "div",
        { class: "inner" },
        el(
          "a",
          { class: "brand", href: "/" },
          el("span", { class: "brand-suits", "aria-hidden": "true" }, "\u2665", el("span", { class: "b", text: "\u2660" })),
          "Tablanette Arena",
        ),
        el(
          "nav",
          { class: "site-nav", "aria-label": "main" },
          nav.map(([key, href, label]) => el("a", { href, "aria-current": key === active ? "page" : null, text: label })),
        ),
        accountSlot(active),
      ),
    );
  }

  /** The header's right end: "Sign up / Log in", or the account's name (its page) once logged in. */
  function accountSlot(active) {
    const slot = el("span", { class: "site-account", "data-testid": "site-account" });
    session().then((s) => {
      clear(slot);
      if (s.account) {
        slot.append(el("a", { href: "/account", "data-testid": "account-link", "aria-current": active === "account" ? "page" : null, text: s.account.name }));
      } else {
        slot.append(
          el("a", { href: "/signup", "data-testid": "signup-link", "aria-current": active === "signup" ? "page" : null, text: "Sign up" }),
          " / ",
          el("a", { href: "/login", "data-testid": "login-link", "aria-current": active === "login" ? "page" : null, text: "Log in" }),
        );
      }
      slot.dataset.state = s.account ? "in" : "out";
    });
    return slot;
  }

  function crumbs(items) {
    const box = el("nav", { class: "crumbs", "aria-label": "breadcrumbs" });
    items.forEach(([label, href], i) => {
      if (i) box.append(el("span", { class: "sep", "aria-hidden": "true", text: "›" }));
      box.append(href ? el("a", { href, text: label }) : el("span", { text: label }));
    });
    return box;
  }

  /** Mark the page as loaded (tests wait for body[data-ready]). */
  function ready() {
    document.body.dataset.ready = "1";
  }

  return {
    el,
    svg,
    clear,
    $,
    urls,
    pathParts,
    fetchJSON,
    load,
    session,
    send,
    reason,
    showError,
    clearErrors,
    SUITS,
    parseCard,
    rankLabel,
    cardText,
    cardName,
    card,
    cards,
    num,
    signed,
    time,
    timeTick,
    fullTime,
    duration,
    botName,
    badge,
    teamOf,
    matchFor,
    scoreText,
    resultCell,
    sparkline,
    lineChart,
    seriesChart,
    progressBar,
    sortableTable,
    wrapTable,
    header,
    crumbs,
    ready,
  };
})();
