// The stored conversations (the Responses store): listed, and opened again.
import { el, json } from "./api.js";

export async function listConversations(node, current, open) {
  const { conversations } = await json("/api/conversations?limit=50");
  node.replaceChildren(
    ...conversations.map((c) =>
      el(
        "li",
        {},
        el(
          "button",
          { type: "button", class: c.id === current ? "conversation current" : "conversation", "data-id": c.id, onclick: () => open(c.id) },
          c.title || "(no text)",
          el("small", { class: "muted" }, ` ${c.model} · ${new Date(c.created_at * 1000).toLocaleString()}`),
        ),
      ),
    ),
  );
}

// The whole conversation that ends with response `id`: its input items, then its output.
export async function conversationItems(id) {
  const [items, response] = await Promise.all([
    json(`/v1/responses/${encodeURIComponent(id)}/input_items?order=asc&limit=100`),
    json(`/v1/responses/${encodeURIComponent(id)}`),
  ]);
  return { items: [...items.data, ...response.output], response };
}
