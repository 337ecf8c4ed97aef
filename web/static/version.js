/* One hosted version: its state, leagues and quarantines, faults with evidence, latest output, preflight, build log.
   Its program's own words (latest output, faults' output, build log) come only to its owner (the owner key, sent
   as an Authorization header: never in a URL) unless the owner shows them to everyone. */
"use strict";

(() => {
  const { el, clear, urls, num } = TA;
  TA.header("bots");
  const parts = TA.pathParts(); // ["bots", bot, "versions", n]
  const bot = parts[1] || "";
  const number = parts[3] || "";
  const name = `${bot}@${number}`;
  document.title = `${name} · Tablanette Arena`;
  document.getElementById("version-name").textContent = name;
  document.getElementById("crumbs").append(TA.crumbs([["Hosted bots", "/#hosted"], [bot, urls.hosted(bot)], [name, null]]));

  const lines = (output, testid) => el("pre", { class: "output", "data-testid": testid, text: output.join("\n") || "(no output)" });

  function renderHead(v) {
    clear(document.getElementById("version-state")).append(TA.badge(v.state));
    const m = v.manifest;
    document.getElementById("version-sub").textContent =
      `${m.language || "?"}, ${m.protocol}: runs ${m.run.join(" ")} · submitted ${TA.time(v.submitted)} · source ${v.source_hash.slice(0, 12)}` +
      (v.note ? ` · ${v.note}` : "");
    const box = document.getElementById("quarantines");
    const held = v.leagues.filter((s) => s.quarantine);
    const shown = JSON.stringify(held.map((s) => [s.league, s.quarantine]));
    if (box.dataset.shown === shown) return; // keep a half-written request while the page refreshes
    box.dataset.shown = shown;
    clear(box);
    for (const s of held) {
      const q = s.quarantine;
      box.append(
        el(
          "div",
          { class: "conduct-flag", "data-testid": "quarantine", "data-league": s.league },
          el(
            "p",
            null,
            `Quarantined in league ${s.league} since ${TA.time(q.at)}: ${q.reason}. `,
            "Its matches there wait, never charged to its opponents. Submit a new version, or ask the operator to run ",
            el("code", { text: `tablanette league lift ${s.league} ${name}` }),
            ".",
          ),
          q.lift_request
            ? el("p", { "data-testid": "lift-request" }, `Its owner asked for a lift on ${TA.time(q.lift_request.at)}: `, el("q", { text: q.lift_request.message }))
            : liftForm(s.league),
        ),
      );
    }
  }

  // The owner key, kept for this tab only (as the submission and lift forms keep it).
  const KEY = `owner-key:${bot}`;
  const PRIVATE = "Shown to its owner only: enter the owner key above to read it.";
  const ownerHeaders = () => {
    const key = sessionStorage.getItem(KEY);
    return key ? { Authorization: `Bearer ${key}` } : {};
  };
  // An owner logged in with the account that owns the bot needs no key, but its session's CSRF token.
  const csrf = async () => {
    const s = await TA.session();
    return s.csrf ? { "X-CSRF-Token": s.csrf } : {};
  };

  // The owner reads the output with the key, and chooses whether everyone may.
  function renderOwner(v) {
    const host = clear(document.getElementById("owner-view"));
    const state = el("p", { "data-testid": "output-visibility" },
      v.output_public ? "Everyone may read this bot's output and build logs (its owner chose so)." : "Only this bot's owner reads its output and build logs.");
    host.append(state);
    if (v.owner) {
      const flip = el("button", { type: "button", "data-testid": "visibility-button", text: v.output_public ? "Show them to its owner only" : "Show them to everyone" });
      const result = el("p", { class: "hint", "data-testid": "visibility-result" });
      flip.addEventListener("click", async () => {
        try {
          const res = await fetch(urls.api(`/bots/${encodeURIComponent(bot)}/output-visibility`), {
            method: "POST",
            headers: { ...ownerHeaders(), ...(await csrf()), "Content-Type": "application/json" },
            body: JSON.stringify({ public: !v.output_public }),
          });
          const body = await res.json().catch(() => ({}));
          if (!res.ok) throw new Error(typeof body.detail === "string" ? body.detail : `${res.status} ${res.statusText}`);
          await refresh();
        } catch (err) {
          result.className = "conduct-flag";
          result.textContent = `Not changed: ${err.message}`;
        }
      });
      host.append(el("p", { class: "muted", text: "You are reading it as its owner." }), flip, result);
      return;
    }
    const key = el("input", { type: "password", autocomplete: "off", required: true, "data-testid": "owner-view-key" });
    const result = el("p", { class: "hint", "data-testid": "owner-view-result" });
    const form = el(
      "form",
      { class: "submit-form", "data-testid": "owner-view-form" },
      el("label", null, "Owner key ", key),
      el("button", { type: "submit", "data-testid": "owner-view-button", text: "Read it as its owner" }),
      result,
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      sessionStorage.setItem(KEY, key.value.trim());
      const v2 = await refresh();
      if (v2 && !v2.owner) {
        sessionStorage.removeItem(KEY);
        const again = document.querySelector('[data-testid="owner-view-result"]');
        if (again) {
          again.className = "conduct-flag";
          again.textContent = `Not ${bot}'s owner key.`;
        }
      }
    });
    host.append(form);
  }

  // The owner asks the operator to lift a quarantine (with the owner key, as for a submission).
  function liftForm(league) {
    const key = el("input", { type: "password", autocomplete: "off", "data-testid": "lift-key", placeholder: "not needed when logged in as its owner" });
    key.value = sessionStorage.getItem(KEY) || "";
    const message = el("textarea", { rows: "2", maxlength: "2000", required: true, "data-testid": "lift-message", placeholder: "What you fixed, or why it should play again" });
    const result = el("p", { class: "hint", "data-testid": "lift-result" });
    const form = el(
      "form",
      { class: "submit-form", "data-testid": "lift-form" },
      el("label", null, "Ask for a lift: ", message),
      el("label", null, "Owner key ", key),
      el("button", { type: "submit", "data-testid": "lift-button", text: "Ask the operator" }),
      result,
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      result.textContent = "Sending…";
      try {
        const res = await fetch(urls.api(`/bots/${encodeURIComponent(bot)}/versions/${encodeURIComponent(number)}/lift-request`), {
          method: "POST",
          headers: { ...(key.value.trim() ? { Authorization: `Bearer ${key.value.trim()}` } : {}), ...(await csrf()), "Content-Type": "application/json" },
          body: JSON.stringify({ league, message: message.value }),
        });
        const body = await res.json().catch(() => ({}));
        if (!res.ok) throw new Error(typeof body.detail === "string" ? body.detail : `${res.status} ${res.statusText}`);
        if (key.value.trim()) sessionStorage.setItem(KEY, key.value.trim());
        await refresh();
      } catch (err) {
        result.className = "conduct-flag";
        result.textContent = `Not sent: ${err.message}`;
      }
    });
    return form;
  }

  function renderLeagues(v) {
    const host = clear(document.getElementById("leagues"));
    if (!v.leagues.length) {
      host.append(el("p", { class: "muted", text: "In no league yet." }));
      return;
    }
    const rows = v.leagues.map((s) =>
      el(
        "tr",
        { "data-testid": "league-row", "data-league": s.league },
        el("td", null, el("a", { href: urls.bot(s.league, name), text: s.league }), s.preflight ? el("span", { class: "muted small", text: " (preflight)" }) : null),
        el("td", { class: "num", text: s.rating === null ? "–" : num(s.rating, 0) }),
        el("td", { class: "num", text: s.interval ? `${num(s.interval[0], 0)} – ${num(s.interval[1], 0)}` : "–" }),
        el("td", { class: "num", text: s.games }),
        el("td", { class: "num", text: `${s.timeouts} / ${s.illegal} / ${s.forfeits}` }),
        el("td", null, s.quarantine ? el("span", { class: "badge quarantined", text: "quarantined" }) : "–"),
      ),
    );
    host.append(
      TA.wrapTable(
        el(
          "table",
          { class: "data", "data-testid": "version-leagues" },
          el("thead", null, el("tr", null, [["League"], ["Rating", "num"], ["95% interval", "num"], ["Games", "num"], ["Timeouts / illegal / forfeits", "num"], ["Quarantine"]].map(([h, c]) => el("th", { class: c || null, text: h })))),
          el("tbody", null, rows),
        ),
      ),
    );
  }

  function renderFaults(v) {
    const host = clear(document.getElementById("faults"));
    if (!v.evidence.length) {
      host.append(el("p", { class: "muted", text: "None." }));
      return;
    }
    for (const e of v.evidence) {
      host.append(
        el(
          "div",
          { class: "fault", "data-testid": "fault" },
          el("p", null, el("strong", { text: TA.time(e.at) }), " ", el("span", { "data-testid": "fault-reason", text: e.reason })),
          v.output_shown ? lines(e.output, "fault-output") : el("p", { class: "muted", "data-testid": "fault-output-private", text: PRIVATE }),
        ),
      );
    }
  }

  function renderOutput(v) {
    const host = clear(document.getElementById("output"));
    document.getElementById("output-hint").textContent = v.output_at ? `its program's last ${v.output.length} line(s), as of ${TA.time(v.output_at)}` : "";
    if (!v.output_shown) {
      host.append(el("p", { class: "muted", "data-testid": "latest-output-private", text: PRIVATE }));
      return;
    }
    host.append(v.output.length ? lines(v.output, "latest-output") : el("p", { class: "muted", text: "Nothing yet." }));
  }

  function renderPreflight(v) {
    const host = clear(document.getElementById("preflight"));
    const pf = v.preflight;
    if (!pf || !pf.league) {
      host.append(el("p", { class: "muted", text: v.state === "preflight" ? "Playing now." : "Not played." }));
      return;
    }
    host.append(
      el("p", { "data-testid": "preflight-verdict" }, pf.passed ? "Passed: " : "Failed: ",
        `${pf.games} of ${pf.planned} games in `, el("a", { href: urls.league(pf.league), text: pf.league }),
        pf.problems.length ? ` (${pf.problems.join("; ")})` : "."),
    );
  }

  function renderBuild(v) {
    const host = clear(document.getElementById("build"));
    document.getElementById("build-hint").textContent = v.build_seconds === null ? "" : `${v.build_seconds} s, in the sandbox`;
    if (!v.output_shown && v.state !== "submitted") {
      host.append(el("p", { class: "muted", "data-testid": "build-log-private", text: PRIVATE }));
      return;
    }
    if (v.build_error) host.append(el("p", { "data-testid": "build-error" }, "The build's last error: ", el("code", { text: v.build_error })));
    host.append(v.build_log ? el("pre", { class: "output", "data-testid": "build-log", text: v.build_log }) : el("p", { class: "muted", text: "Not built yet." }));
  }

  async function refresh() {
    try {
      const v = await TA.load(urls.api(`/bots/${encodeURIComponent(bot)}/versions/${encodeURIComponent(number)}`), {
        headers: { Accept: "application/json", ...ownerHeaders() },
      });
      renderHead(v);
      renderOwner(v);
      renderLeagues(v);
      renderFaults(v);
      renderOutput(v);
      renderPreflight(v);
      renderBuild(v);
      return v;
    } catch (_) {
      for (const id of ["leagues", "faults", "output", "preflight", "build"]) clear(document.getElementById(id));
      return null;
    }
  }

  async function main() {
    await refresh();
    TA.ready();
  }

  main();
})();
