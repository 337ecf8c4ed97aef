/* The API page: every endpoint of /api/openapi.json with its parameters and summary. */
"use strict";

(() => {
  const { el, clear } = TA;
  TA.header("api");

  const examples = document.getElementById("examples");
  examples.textContent = examples.textContent.replaceAll("BASE", location.origin);

  function typeOf(schema) {
    if (!schema) return "";
    if (schema.anyOf) return schema.anyOf.map(typeOf).join(" | ");
    let t = schema.type || (schema.$ref ? schema.$ref.split("/").pop() : "");
    const limits = [];
    if (schema.minimum !== undefined) limits.push(`≥ ${schema.minimum}`);
    if (schema.exclusiveMinimum !== undefined) limits.push(`> ${schema.exclusiveMinimum}`);
    if (schema.maximum !== undefined) limits.push(`≤ ${schema.maximum}`);
    if (schema.exclusiveMaximum !== undefined) limits.push(`< ${schema.exclusiveMaximum}`);
    if (limits.length) t += ` (${limits.join(", ")})`;
    return t;
  }

  function endpoint(path, method, op) {
    const params = op.parameters || [];
    const id = `op-${method}-${path}`.replace(/[^a-zA-Z0-9-]+/g, "-");
    return el(
      "article",
      { class: "endpoint", id, "data-testid": "endpoint", "data-path": path, "data-method": method.toUpperCase() },
      el("div", { class: "sig" }, el("span", { class: "method", text: method.toUpperCase() }), el("span", { class: "path", text: path })),
      el("p", { class: "summary", text: op.summary || "" }),
      op.description ? el("p", { class: "muted small", text: op.description }) : null,
      params.length
        ? TA.wrapTable(
            el(
              "table",
              { class: "data" },
              el("thead", null, el("tr", null, ["Parameter", "In", "Type", "Required", "Default"].map((h) => el("th", { text: h })))),
              el(
                "tbody",
                null,
                params.map((p) =>
                  el(
                    "tr",
                    { "data-testid": "param" },
                    el("td", null, el("code", { text: p.name })),
                    el("td", { text: p.in }),
                    el("td", { text: typeOf(p.schema) }),
                    el("td", { text: p.required ? "yes" : "no" }),
                    el("td", { text: p.schema && p.schema.default !== undefined ? JSON.stringify(p.schema.default) : "" }),
                  ),
                ),
              ),
            ),
          )
        : el("p", { class: "muted small", text: "No parameters." }),
    );
  }

  async function main() {
    let spec;
    try {
      spec = await TA.load("/api/openapi.json");
    } catch (_) {
      clear(document.getElementById("endpoints"));
      TA.ready();
      return;
    }
    if (spec.info && spec.info.description) {
      // the description may use `backticks` for code (Markdown); nothing else is interpreted
      const chunks = spec.info.description.split("`").map((t, i) => (i % 2 ? el("code", { text: t }) : t));
      clear(document.getElementById("api-description")).append(...chunks);
    }
    const byTag = new Map();
    let count = 0;
    for (const [path, ops] of Object.entries(spec.paths || {})) {
      for (const [method, op] of Object.entries(ops)) {
        const tag = (op.tags && op.tags[0]) || "other";
        if (!byTag.has(tag)) byTag.set(tag, []);
        byTag.get(tag).push(endpoint(path, method, op));
        count += 1;
      }
    }
    const host = clear(document.getElementById("endpoints"));
    for (const [tag, nodes] of byTag) host.append(el("h3", { class: "tag-title", text: tag }), ...nodes);
    document.getElementById("endpoints-hint").textContent = `${count} endpoints · API version ${spec.info ? spec.info.version : "?"}`;
    TA.ready();
  }

  main();
})();
