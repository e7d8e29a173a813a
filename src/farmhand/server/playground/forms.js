// Forms built from a JSON Schema object: an MCP server's question (elicitation) or a
// tool's parameters. Flat fields get their own inputs; anything nested is JSON text.
import { el } from "./api.js";

let counter = 0;

function field(name, schema, required) {
  const id = `field-${++counter}`;
  const title = schema.title || name;
  const label = el("label", { for: id }, title, required ? " *" : "");
  const hint = schema.description ? el("small", { class: "muted" }, schema.description) : null;
  let input;
  let read;
  if (Array.isArray(schema.enum)) {
    input = el("select", { id, name }, schema.enum.map((v) => el("option", { value: JSON.stringify(v) }, String(v))));
    if (schema.default !== undefined) input.value = JSON.stringify(schema.default);
    read = () => JSON.parse(input.value);
  } else if (schema.type === "boolean") {
    input = el("input", { id, name, type: "checkbox", checked: schema.default === true });
    read = () => input.checked;
  } else if (schema.type === "number" || schema.type === "integer") {
    input = el("input", { id, name, type: "number", step: schema.type === "integer" ? "1" : "any", required });
    if (schema.default !== undefined) input.value = schema.default;
    read = () => (input.value === "" ? undefined : Number(input.value));
  } else if (schema.type === "string" || schema.type === undefined) {
    input = el("input", { id, name, type: "text", required });
    if (schema.default !== undefined) input.value = schema.default;
    read = () => (input.value === "" && !required ? undefined : input.value);
  } else {
    input = el("textarea", { id, name, rows: "2", placeholder: `JSON ${schema.type}`, required });
    if (schema.default !== undefined) input.value = JSON.stringify(schema.default);
    read = () => (input.value.trim() === "" ? undefined : JSON.parse(input.value));
  }
  return { node: el("div", { class: "field" }, label, input, hint), name, read };
}

// {node, read()}: read() returns the object the fields hold (throws on bad JSON).
export function schemaForm(schema) {
  const properties = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const fields = Object.entries(properties).map(([name, sub]) => field(name, sub || {}, required.has(name)));
  const node = el("div", { class: "fields" }, fields.map((f) => f.node));
  const read = () => {
    const value = {};
    for (const f of fields) {
      const v = f.read();
      if (v !== undefined) value[f.name] = v;
    }
    return value;
  };
  return { node, read };
}

// A server's question (an `mcp_elicitation_request` item: in a chat, or in a call by hand)
// as a card: its message and the form built from its schema, or the link it wants opened.
// `answer({action, content?})` sends the person's answer; `open` false shows it answered.
export function elicitationCard(item, open, answer) {
  const card = el("article", { class: "card question", "data-question": item.id });
  const form = schemaForm(item.requested_schema || {});
  const send = (action) => {
    const body = { action };
    if (action === "accept") {
      try {
        body.content = form.read();
      } catch (error) {
        card.append(el("p", { class: "error" }, `Not JSON: ${error.message}`));
        return;
      }
    }
    card.replaceChildren(el("header", {}, el("strong", {}, action === "accept" ? "Answered" : "Declined")));
    answer(body);
  };
  card.append(
    el("header", {}, el("strong", {}, `Question from ${item.server_label}`)),
    el("p", {}, item.message || ""),
    item.mode === "url" ? el("p", {}, "Open ", el("a", { href: item.url, target: "_blank", rel: "noopener" }, item.url)) : form.node,
    open ? el("div", { class: "row" },
      el("button", { type: "button", class: "primary", onclick: () => send("accept") }, item.mode === "url" ? "Done" : "Send"),
      el("button", { type: "button", onclick: () => send("decline") }, "Decline")) : null,
  );
  return card;
}
