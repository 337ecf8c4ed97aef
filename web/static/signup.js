/* Sign up: a name and a password (and the operator's invite code when sign-up is by invitation); the
   answer logs the new account in, and its page follows. What sign-up allows comes from
   GET /api/signup-policy: open, invite or closed (said plainly, with no form). */
"use strict";

(() => {
  const { el } = TA;
  TA.header("signup");
  const $ = (id) => document.getElementById(id);
  const result = $("signup-result");

  function say(text, ok) {
    result.className = ok ? "result-ok" : "result-bad";
    result.textContent = text;
  }

  function showPolicy(policy) {
    $("policy-loading").hidden = true;
    document.body.dataset.policy = policy;
    if (policy === "closed") {
      $("closed").hidden = false;
      $("policy-hint").textContent = "closed";
      return;
    }
    $("signup-form").hidden = false;
    $("invite-label").hidden = policy !== "invite";
    $("invite").required = policy === "invite";
    $("policy-hint").textContent = policy === "invite" ? "by invitation: an invite code from the operator" : "open to anyone";
  }

  async function signUp(event) {
    event.preventDefault();
    if ($("password").value !== $("password2").value) {
      say("The two passwords differ: type the same one twice.", false);
      return;
    }
    say("Signing up…", true);
    try {
      const body = { name: $("name").value.trim(), password: $("password").value, invite: $("invite").value.trim() };
      await TA.fetchJSON(TA.urls.api("/accounts"), {
        method: "POST",
        headers: { Accept: "application/json", "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
      location.assign("/account");
    } catch (err) {
      say(`Not signed up: ${TA.reason(err)}`, false);
    }
  }

  async function main() {
    $("signup-form").addEventListener("submit", signUp);
    const [policy, me] = await Promise.all([TA.load(TA.urls.api("/signup-policy")).catch(() => null), TA.session()]);
    if (me.account) {
      const already = $("already");
      already.append("You are logged in as ", el("a", { href: "/account", text: me.account.name }), ". Log out on your account's page to make another account.");
      already.hidden = false;
    }
    if (policy) showPolicy(policy.policy);
    TA.ready();
  }

  main();
})();
