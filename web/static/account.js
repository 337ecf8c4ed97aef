/* The account's own page: who is logged in, its bots (connected: create, new token, revoke; hosted: upload
 * an archive or a folder, and each version's page). Its keys, password and deletion are account_settings.js.
 *
 * Everything comes from GET /api/me; every change is a call by the session with its CSRF token (TA.send),
 * and every refusal is shown in the API's own words. A name or label is someone's input: it reaches the
 * page only as text (TA.el's text, never HTML).
 */
"use strict";

const AccountPage = (() => {
  const { el, clear, urls } = TA;
  TA.header("account");
  const $ = (id) => document.getElementById(id);
  const IN_FLIGHT = new Set(["submitted", "building", "preflight"]);
  const BOT_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/; // store/tokens.py's NAME_RE
  const BOT_NAME_RULE = "a bot name is 1-64 letters, digits, '_', '.' or '-', starting with one of the first";
  let me = null;
  let poll = null;

  /** Show ``text`` in the result line ``node``: good news, or a refusal. */
  function say(node, text, ok) {
    node.className = ok ? "result-ok" : "result-bad";
    clear(node).append(text);
  }

  /** A secret shown once (a token, a key): its value, a copy button, and what to do with it. */
  function secretBox(testid, title, value, ...how) {
    const copied = el("span", { class: "muted small", "data-testid": "copy-result" });
    const copy = el("button", { type: "button", "data-testid": "copy-button", text: "Copy" });
    copy.addEventListener("click", async () => {
      try {
        await navigator.clipboard.writeText(value);
        copied.textContent = " copied";
      } catch (_) {
        window.getSelection().selectAllChildren(box.querySelector(".secret-value"));
        copied.textContent = " selected: copy it with Ctrl+C (⌘C)";
      }
    });
    const box = el(
      "div",
      { class: "secret", "data-testid": testid, role: "status" },
      el("p", null, el("strong", { text: title }), ": shown this once. Copy it now: the arena keeps only its hash, so it can replace it but never show it again."),
      el("code", { class: "secret-value", "data-testid": "secret-value", text: value }),
      el("p", null, copy, copied),
      how,
    );
    return box;
  }

  // ------------------------------------------------------------------ the bots

  function connectHow(bot, token) {
    return [
      el("p", null, "Run your bot with its token in ", el("code", { text: "TABLANETTE_TOKEN" }),
        " (never on its command line: everyone on the machine can read that) and the arena's engine address in ",
        el("code", { text: "TABLANETTE_ADDRESS" }), " (the arena's operator gives it). To try it with a built-in bot:"),
      el("pre", { class: "output", "data-testid": "connect-command", text: `TABLANETTE_TOKEN=${token} TABLANETTE_ADDRESS=HOST:PORT tablanette bot run greedy --as ${bot}` }),
      el("p", null, "A program of your own: speak the bot protocol (", el("code", { text: "docs/protocol.md" }), ", the Python SDK ",
        el("code", { text: "bots/sdk.py" }), "), or JSON lines on standard input and output (", el("code", { text: "docs/jsonlines.md" }),
        ") through ", el("code", { text: `tablanette bot bridge --as ${bot} -- ./mybot` }), ". While it is connected it plays in the open ladders (they take accounts' bots by themselves) and in the leagues the operator adds it to; ",
        el("a", { href: urls.hosted(bot), text: `its page` }), " shows its results."),
    ];
  }

  function showToken(bot, token, fresh) {
    const title = fresh ? `${bot}'s token` : `${bot}'s new token (the old one no longer works)`;
    clear($("token-box")).append(secretBox("new-token", title, token, connectHow(bot, token)));
    $("token-box").firstChild.dataset.bot = bot;
  }

  async function tokenAction(bot, method, result) {
    say(result, method === "POST" ? "Issuing…" : "Revoking…", true);
    try {
      const answer = await TA.send(method, `/me/bots/${encodeURIComponent(bot)}/token`);
      if (answer.token) showToken(bot, answer.token, false);
      const shown = $("token-box").firstChild;
      if (answer.revoked && shown && shown.dataset.bot === bot) clear($("token-box")); // a dead token is no use
      await refresh();
    } catch (err) {
      say(result, `Not done: ${TA.reason(err)}`, false);
    }
  }

  function connectedRow(b) {
    const result = el("span", { "data-testid": "bot-result" });
    const rotate = el("button", { type: "button", "data-testid": "rotate-button", text: b.token === "live" ? "New token" : "Issue a token" });
    rotate.addEventListener("click", () => tokenAction(b.bot, "POST", result));
    const revoke = b.token === "live" ? el("button", { type: "button", "data-testid": "revoke-button", text: "Revoke its token" }) : null;
    if (revoke) revoke.addEventListener("click", () => tokenAction(b.bot, "DELETE", result));
    const state = b.token === "live" ? `token live (${b.token_prefix}…)` : "token revoked: it cannot connect";
    return [el("td", { "data-testid": "bot-state", text: state }), el("td", null, el("div", { class: "row-actions" }, rotate, revoke, result))];
  }

  function hostedRow(b) {
    const versions = [...b.versions].sort((x, y) => y.number - x.number);
    const list = versions.length
      ? el("ul", { class: "plain" }, versions.map((v) => el("li", { "data-testid": "my-version", "data-version": v.name, "data-state": v.state },
          el("a", { href: urls.version(v.name), text: v.name }), " ", TA.badge(v.state))))
      : el("span", { class: "muted", text: "no version yet" });
    const again = el("button", { type: "button", "data-testid": "new-version-button", text: "Upload a new version" });
    again.addEventListener("click", () => {
      $("hosted-name").value = b.bot;
      $("archive").focus();
    });
    return [el("td", { "data-testid": "bot-state" }, list), el("td", null, again)];
  }

  function renderBots(bots) {
    $("bots-hint").textContent = `${bots.length} bot(s)`;
    const host = clear($("bots"));
    clear($("hosted-names")).append(bots.filter((b) => b.kind === "hosted").map((b) => el("option", { value: b.bot })));
    if (!bots.length) {
      host.append(el("p", { class: "muted", "data-testid": "no-bots", text: "None yet: create a connected bot or upload a hosted one below." }));
      return;
    }
    const rows = bots.map((b) =>
      el("tr", { "data-testid": "my-bot", "data-bot": b.bot, "data-kind": b.kind },
        el("td", null, el("a", { class: "bot-link", href: urls.hosted(b.bot), text: b.bot })),
        el("td", { text: b.kind }),
        b.kind === "connected" ? connectedRow(b) : hostedRow(b)),
    );
    const head = ["Bot", "Kind", "State", ""];
    host.append(TA.wrapTable(el("table", { class: "data", "data-testid": "my-bots" },
      el("thead", null, el("tr", null, head.map((h) => el("th", { text: h })))), el("tbody", null, rows))));
  }

  async function createConnected(event) {
    event.preventDefault();
    const result = $("connected-result");
    say(result, "Creating…", true);
    try {
      const answer = await TA.send("POST", "/me/bots", { name: $("connected-name").value.trim() });
      showToken(answer.bot, answer.token, true);
      say(result, `Created ${answer.bot}: its token is shown above, once.`, true);
      $("connected-name").value = "";
      await refresh();
    } catch (err) {
      say(result, `Not created: ${TA.reason(err)}`, false);
    }
  }

  // ------------------------------------------------------------------ a hosted bot's upload

  async function source() {
    if ($("folder").files.length) return [await Tarball.pack($("folder").files), "application/gzip"];
    const file = $("archive").files[0];
    if (!file) throw new Error("pick an archive of the bot's folder, or the folder itself");
    return [file, /\.zip$/i.test(file.name) ? "application/zip" : "application/gzip"];
  }

  async function upload(event) {
    event.preventDefault();
    const result = $("upload-result");
    const bot = $("hosted-name").value.trim();
    delete result.dataset.version;
    say(result, $("folder").files.length ? "Packing the folder…" : "Uploading…", true);
    try {
      if (!BOT_NAME.test(bot)) throw new Error(BOT_NAME_RULE); // the name is part of the address: a '/' would be another
      const [body, type] = await source();
      say(result, "Uploading…", true);
      const v = await TA.send("POST", `/bots/${encodeURIComponent(bot)}/versions`, body, type);
      say(result, `Uploaded ${v.name} (source ${v.source_hash.slice(0, 12)}): the arena builds it and plays its preflight next; `, true);
      result.append(el("a", { href: urls.version(v.name), "data-testid": "version-link", text: "follow it on its page" }), ".");
      result.dataset.version = v.name;
      result.dataset.source = v.source_hash;
      await refresh();
    } catch (err) {
      say(result, `Not uploaded: ${TA.reason(err)}`, false);
    }
  }

  function wireUpload() {
    const archive = $("archive");
    const folder = $("folder");
    archive.addEventListener("change", () => { if (archive.files.length) folder.value = ""; });
    folder.addEventListener("change", () => { if (folder.files.length) archive.value = ""; });
    if (!Tarball.supported()) {
      $("folder-label").hidden = true;
      $("folder-unsupported").hidden = false;
    }
    $("hosted-form").addEventListener("submit", upload);
  }

  // ------------------------------------------------------------------ the page

  function loggedOut() {
    $("account-part").hidden = true;
    $("logged-out").hidden = false;
    $("account-name").textContent = "Your account";
    $("account-sub").textContent = "";
  }

  function renderWho(account) {
    document.title = `${account.name} · Tablanette Arena`;
    $("account-name").textContent = account.name;
    $("password-user").value = account.name; // for the browser's password manager
    const out = el("button", { type: "button", "data-testid": "logout-button", text: "Log out" });
    out.addEventListener("click", () => AccountSettings.logOut());
    clear($("account-sub")).append(`Your account since ${TA.time(account.created)}. `, out);
  }

  /** Ask GET /api/me again and draw the page; false when the session is over (logged out elsewhere). */
  async function refresh() {
    try {
      me = await TA.fetchJSON(urls.api("/me"));
    } catch (err) {
      if (err.status === 401) {
        loggedOut();
        return false;
      }
      TA.showError(err);
      return false;
    }
    renderWho(me.account);
    renderBots(me.bots);
    AccountSettings.renderKeys(me.keys);
    clearTimeout(poll);
    const building = me.bots.some((b) => b.kind === "hosted" && b.versions.some((v) => IN_FLIGHT.has(v.state)));
    if (building) poll = setTimeout(refresh, 5000); // a version's build and preflight move on while the page is open
    return true;
  }

  async function main() {
    const s = await TA.session();
    if (!s.account) {
      loggedOut();
      TA.ready();
      return;
    }
    $("account-part").hidden = false;
    $("connected-form").addEventListener("submit", createConnected);
    wireUpload();
    AccountSettings.wire();
    await refresh();
    TA.ready();
  }

  document.addEventListener("DOMContentLoaded", main);
  return { say, secretBox, refresh, loggedOut, get me() { return me; } };
})();
