/* Log in: a name and a password; the answer sets the session cookie (HttpOnly: no script reads it) and the
   account's page follows. A refusal says only what the API says (it never tells which of the two was
   wrong); too many say when to try again. */
"use strict";

(() => {
  const { el } = TA;
  TA.header("login");
  const $ = (id) => document.getElementById(id);
  const NOTICES = {
    password: "Your password was changed and every session ended: log in with the new one.",
    out: "You are logged out.",
  };

  async function logIn(event) {
    event.preventDefault();
    const result = $("login-result");
    result.className = "result-ok";
    result.textContent = "Logging in…";
    try {
      const body = { name: $("name").value.trim(), password: $("password").value };
      await TA.fetchJSON(TA.urls.api("/session"), {
        method: "POST",
        headers: { Accept: "application/json", "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      location.assign("/account");
    } catch (err) {
      result.className = "result-bad";
      result.textContent = `Not logged in: ${TA.reason(err)}`;
    }
  }

  async function main() {
    $("login-form").addEventListener("submit", logIn);
    const why = new URLSearchParams(location.search).get("why");
    if (why && NOTICES[why]) {
      $("notice").textContent = NOTICES[why];
      $("notice").hidden = false;
    }
    const me = await TA.session();
    if (me.account) {
      $("already").append("You are logged in as ", el("a", { href: "/account", text: me.account.name }), ".");
      $("already").hidden = false;
    }
    TA.ready();
  }

  main();
})();
