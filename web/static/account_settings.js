/* The account page's own settings: personal API keys (create, shown once; list; revoke), the password,
 * deleting the account, and logging out. Each is a call by the session with its CSRF token (TA.send); a
 * key's label is the account's own text, shown only as text. */
"use strict";

const AccountSettings = (() => {
  const { el, clear } = TA;
  const $ = (id) => document.getElementById(id);
  const say = (...args) => AccountPage.say(...args);

  // ------------------------------------------------------------------ API keys

  function keyRow(k) {
    const result = el("span", { "data-testid": "key-row-result" });
    const revoke = el("button", { type: "button", "data-testid": "revoke-key-button", text: "Revoke" });
    revoke.addEventListener("click", async () => {
      say(result, "Revoking…", true);
      try {
        await TA.send("DELETE", `/me/keys/${encodeURIComponent(k.id)}`);
        await AccountPage.refresh();
      } catch (err) {
        say(result, `Not revoked: ${TA.reason(err)}`, false);
      }
    });
    return el(
      "tr",
      { "data-testid": "key-row", "data-key": k.id },
      el("td", { "data-testid": "key-label-shown", text: k.label || "(no label)" }),
      el("td", { class: "mono", text: `${k.prefix}…` }),
      el("td", { class: "nowrap", title: TA.fullTime(k.created), text: TA.time(k.created) }),
      el("td", null, el("div", { class: "row-actions" }, revoke, result)),
    );
  }

  function renderKeys(keys) {
    const host = clear($("keys"));
    if (!keys.length) {
      host.append(el("p", { class: "muted", "data-testid": "no-keys", text: "None." }));
      return;
    }
    const head = ["Label", "Key", "Created", ""];
    host.append(TA.wrapTable(el("table", { class: "data", "data-testid": "keys" },
      el("thead", null, el("tr", null, head.map((h) => el("th", { text: h })))), el("tbody", null, keys.map(keyRow)))));
  }

  async function createKey(event) {
    event.preventDefault();
    const result = $("key-result");
    say(result, "Creating…", true);
    try {
      const k = await TA.send("POST", "/me/keys", { label: $("key-label").value });
      const title = k.label ? `Your new API key, “${k.label}”` : "Your new API key";
      const how = el("p", null, "Send it as ", el("code", { text: "Authorization: Bearer KEY" }), ", for example ",
        el("code", { text: `curl -H "Authorization: Bearer ${k.key}" ${location.origin}/api/me` }), ".");
      clear($("key-box")).append(AccountPage.secretBox("new-key", title, k.key, how));
      $("key-box").firstChild.dataset.key = k.id;
      say(result, "Created: the key is shown above, once.", true);
      $("key-label").value = "";
      await AccountPage.refresh();
    } catch (err) {
      say(result, `Not created: ${TA.reason(err)}`, false);
    }
  }

  // ------------------------------------------------------------------ password, deletion, logout

  async function changePassword(event) {
    event.preventDefault();
    const result = $("password-result");
    if ($("password-new").value !== $("password-new2").value) {
      say(result, "The two new passwords differ: type the same one twice.", false);
      return;
    }
    say(result, "Changing…", true);
    try {
      await TA.send("POST", "/me/password", { current: $("password-current").value, new: $("password-new").value });
      location.assign("/login?why=password"); // every session ended, this one too
    } catch (err) {
      say(result, `Not changed: ${TA.reason(err)}`, false);
    }
  }

  async function deleteAccount(event) {
    event.preventDefault();
    const result = $("delete-result");
    say(result, "Deleting…", true);
    try {
      const answer = await TA.send("POST", "/me/delete", { password: $("delete-password").value });
      $("account-part").hidden = true;
      const gone = $("gone");
      clear(gone).append(el("p", null, `The account ${answer.deleted} is deleted: its keys and tokens no longer work; its bots' names and results stay. `,
        el("a", { href: "/", text: "Back to the leagues" }), "."));
      gone.hidden = false;
      $("account-sub").textContent = "";
      TA.session(true);
      TA.header("account");
    } catch (err) {
      say(result, `Not deleted: ${TA.reason(err)}`, false);
    }
  }

  async function logOut() {
    try {
      await TA.send("DELETE", "/session");
      location.assign("/login?why=out");
    } catch (err) {
      if (err.status === 401) AccountPage.loggedOut(); // already over
      else TA.showError(err);
    }
  }

  function wire() {
    $("key-form").addEventListener("submit", createKey);
    $("password-form").addEventListener("submit", changePassword);
    $("delete-form").addEventListener("submit", deleteAccount);
  }

  return { wire, renderKeys, logOut };
})();
