// The side panel: the configured MCP servers (state, a per-chat switch), their tools
// (schema, annotations), tool search, and calling a tool by hand.
import { el, json } from "./api.js";
import { elicitationCard, schemaForm } from "./forms.js";

export class Panel {
  constructor({ servers, tools, note, search, pattern }) {
    this.serversNode = servers;
    this.toolsNode = tools;
    this.noteNode = note;
    this.off = new Set(); // servers switched off for this chat
    this.approval = new Map(); // server -> its require_approval
    search.addEventListener("submit", (event) => {
      event.preventDefault();
      this.search(pattern.value.trim());
    });
  }

  async refreshServers() {
    const { servers } = await json("/api/mcp/servers");
    this.serversNode.replaceChildren(
      ...servers.map((server) => {
        this.approval.set(server.name, server.require_approval);
        const id = `use-${server.name}`;
        const toggle = el("input", { type: "checkbox", id, checked: !this.off.has(server.name), disabled: server.state === "refused" });
        toggle.addEventListener("change", () => {
          if (toggle.checked) this.off.delete(server.name);
          else this.off.add(server.name);
        });
        return el(
          "li",
          { class: "server", "data-server": server.name },
          toggle,
          el("label", { for: id }, server.name),
          el("span", { class: `badge state-${server.state}` }, server.state),
          el("small", { class: "muted" }, ` ${server.transport}`, server.require_approval !== "never" ? `, asks: ${server.require_approval}` : ""),
          server.error ? el("p", { class: "error small" }, server.error) : null,
        );
      }),
    );
  }

  // Servers the chat should leave out (the per-chat switches).
  disabled() {
    return [...this.off];
  }

  async listTools() {
    this.show(await json("/api/tools"), "");
  }

  async search(pattern) {
    if (!pattern) return this.listTools();
    this.show(await json("/api/tools/search", { method: "POST", body: { pattern, limit: 20 } }), pattern);
  }

  show(found, pattern) {
    const count = `${found.tools.length} of ${found.total} tools`;
    this.noteNode.textContent = pattern ? `${count} match “${pattern}”` : count;
    if (found.errors) this.noteNode.textContent += ` (${found.errors})`;
    this.toolsNode.replaceChildren(...found.tools.map((tool) => this.tool(tool)));
  }

  // Sends a call by hand (or the answer to its server's question) and shows what came
  // back: the result, or the server's question as a form whose answer goes on with it.
  async run(output, path, body) {
    output.replaceChildren(el("p", { class: "muted" }, "Calling…"));
    try {
      const result = await json(path, { method: "POST", body });
      if (result.question) {
        const card = elicitationCard(result.question, true, (answer) => {
          this.run(output, "/api/mcp/call/answer", { question_id: result.question.id, ...answer });
        });
        output.replaceChildren(card);
        return;
      }
      output.replaceChildren(el("pre", { class: result.is_error ? "result error" : "result" }, result.output));
    } catch (error) {
      output.replaceChildren(el("p", { class: "error" }, error.message));
    }
  }

  tool(tool) {
    const bare = tool.name.slice(tool.server.length + 1);
    const form = schemaForm(tool.parameters);
    const output = el("div", { class: "hand-result" });
    const asks = this.approval.get(tool.server) && this.approval.get(tool.server) !== "never";
    const confirm = asks ? el("input", { type: "checkbox", id: `ok-${tool.name}` }) : null;
    const call = async (event) => {
      event.preventDefault();
      let args;
      try {
        args = form.read();
      } catch (error) {
        output.replaceChildren(el("p", { class: "error" }, `Not JSON: ${error.message}`));
        return;
      }
      const body = { server: tool.server, tool: bare, arguments: args, approved: confirm ? confirm.checked : false };
      await this.run(output, "/api/mcp/call", body);
    };
    const annotations = tool.annotations ? el("pre", { class: "schema" }, JSON.stringify(tool.annotations, null, 2)) : null;
    return el(
      "li",
      { class: "tool-entry", "data-tool": tool.name },
      el(
        "details",
        {},
        el("summary", {}, el("strong", {}, tool.name)),
        el("p", {}, tool.description || ""),
        annotations ? el("div", { class: "label" }, "Annotations") : null,
        annotations,
        el("details", {}, el("summary", {}, "Schema"), el("pre", { class: "schema" }, JSON.stringify(tool.parameters, null, 2))),
        el(
          "form",
          { class: "hand-call", onsubmit: call },
          form.node,
          confirm ? el("div", { class: "field" }, confirm, el("label", { for: confirm.id }, "I approve this call")) : null,
          el("button", { type: "submit" }, "Call"),
        ),
        output,
      ),
    );
  }
}
