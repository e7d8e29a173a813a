// The transcript: messages, reasoning, tool-call cards and questions, streamed from the
// Responses API (`POST /v1/responses`, stream: true) or rebuilt from a stored conversation.
import { el, errorText, events, request } from "./api.js";
import { elicitationCard } from "./forms.js";

const FOLD = 400; // characters of a result shown before it folds
const DISCOVERY = "mcp_discover"; // JIT discovery's own tool

function pretty(argumentsText) {
  try {
    return JSON.stringify(JSON.parse(argumentsText), null, 2);
  } catch {
    return argumentsText;
  }
}

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => part.text || "").join("");
}

function resultNode(text, failed) {
  const body = el("pre", { class: failed ? "result error" : "result" }, text);
  if (text.length <= FOLD) return body;
  const head = text.slice(0, FOLD);
  return el(
    "details",
    { class: "folded" },
    el("summary", {}, el("pre", { class: "result" }, `${head}…`), el("span", { class: "muted" }, `show all ${text.length} characters`)),
    body,
  );
}

// One tool call as a card: server and tool, arguments (as the model writes them), result,
// duration.
class ToolCard {
  constructor(item) {
    const discovery = item.name === DISCOVERY;
    this.started = performance.now();
    this.written = item.arguments || "";
    // Opened empty: the model is still writing the call, and its arguments stream in.
    // (One that came whole, e.g. after a question was answered, gets them once more.)
    this.streaming = this.written === "";
    this.badge = el("span", { class: "badge" }, this.streaming ? "writing" : item.status || "in_progress");
    this.args = el("pre", { class: "arguments" }, pretty(this.written));
    this.result = el("div", { class: "result-slot" });
    this.duration = el("span", { class: "muted duration" });
    const title = discovery ? "JIT discovery" : `${item.server_label} · ${item.name}`;
    this.node = el(
      "article",
      { class: discovery ? "card tool discovery" : "card tool", "data-tool": item.name },
      el("header", {}, el("strong", {}, title), this.badge, this.duration),
      el("div", { class: "label" }, discovery ? "Looked for" : "Arguments"),
      this.args,
      this.result,
    );
    if (item.status && item.status !== "in_progress") this.finish(item, false);
  }

  // A piece of the arguments as the model writes them: shown as written until they are whole.
  writing(delta) {
    if (!this.streaming) return;
    this.written += delta;
    this.args.textContent = this.written;
  }

  // The whole arguments, as the call is run with them: the call's time starts here.
  arguments(text) {
    this.written = text;
    this.streaming = false;
    this.args.textContent = pretty(text);
    this.badge.textContent = "in_progress";
    this.started = performance.now();
  }

  finish(item, timed = true) {
    const failed = item.status === "failed";
    this.badge.textContent = item.status;
    this.badge.classList.toggle("failed", failed);
    const text = failed ? textOf(item.error && item.error.content) : item.output || "";
    const label = item.name === DISCOVERY ? "Tools found" : failed ? "Error" : "Result";
    this.result.replaceChildren(el("div", { class: "label" }, label), resultNode(text, failed));
    if (timed) this.duration.textContent = `${((performance.now() - this.started) / 1000).toFixed(2)} s`;
  }
}

function reasoningNode() {
  const text = el("div", { class: "reasoning-text" });
  const node = el("details", { class: "reasoning" }, el("summary", {}, "Reasoning"), text);
  return { node, text };
}

export class Transcript {
  // onAnswer(inputItem): the user answered a question; the chat goes on with it.
  constructor(node, onAnswer) {
    this.node = node;
    this.onAnswer = onAnswer;
    this.cards = new Map(); // call id -> its card: a call held for an answer ends later
    this.rounds = { number: 1, afterCalls: false };
  }

  clear() {
    this.node.replaceChildren();
    this.cards.clear();
    this.rounds = { number: 1, afterCalls: false };
  }

  // The rounds of the tool loop: the model writes, its calls run, the model reads their
  // results in the next round. What the model writes after a call ran opens a new round.
  modelWrites() {
    if (!this.rounds.afterCalls) return;
    this.rounds.number += 1;
    this.rounds.afterCalls = false;
    const label = `Round ${this.rounds.number}`;
    this.add(el("div", { class: "round", role: "separator", "aria-label": label }, el("span", {}, label)));
  }

  callRan(item) {
    if (item.status === "completed" || item.status === "failed") this.rounds.afterCalls = true;
  }

  // The card of an mcp_call item: the one already shown for that call, or a new one.
  card(item) {
    const shown = this.cards.get(item.id);
    if (shown) {
      shown.started = performance.now(); // it ran once the question was answered
      shown.streaming = false;
      if (item.status && item.status !== "in_progress") shown.finish(item, false);
      return shown;
    }
    const card = new ToolCard(item);
    this.cards.set(item.id, card);
    this.add(card.node);
    return card;
  }

  add(child) {
    this.node.append(child);
    child.scrollIntoView({ block: "end" });
    return child;
  }

  user(text) {
    this.rounds = { number: 1, afterCalls: false };
    return this.add(el("div", { class: "message user" }, el("div", { class: "who" }, "You"), el("div", { class: "text" }, text)));
  }

  note(text, kind = "note") {
    return this.add(el("p", { class: kind }, text));
  }

  // The items of a stored conversation, in order; a question left last is still open.
  stored(items) {
    items.forEach((item, index) => {
      const last = index === items.length - 1;
      if (item.type === "message" && item.role === "user") {
        this.user(textOf(item.content));
      } else if (item.type === "message") {
        this.modelWrites();
        this.add(el("div", { class: `message ${item.role}` }, el("div", { class: "who" }, item.role), el("div", { class: "text" }, textOf(item.content))));
      } else if (item.type === "reasoning") {
        this.modelWrites();
        const r = reasoningNode();
        r.text.textContent = textOf(item.content);
        this.add(r.node);
      } else if (item.type === "mcp_call" && item.status !== "incomplete") {
        if (!this.cards.has(item.id)) this.modelWrites();
        this.card(item);
        this.callRan(item);
      } else if (item.type === "mcp_approval_request" || item.type === "mcp_elicitation_request") {
        this.add(this.question(item, last));
      }
    });
  }

  question(item, open) {
    if (item.type === "mcp_approval_request") {
      const card = el("article", { class: "card question", "data-question": item.id });
      const done = (text) => card.replaceChildren(el("header", {}, el("strong", {}, text)));
      const approve = (yes) => {
        done(yes ? "Approved" : "Denied");
        this.onAnswer({ type: "mcp_approval_response", approval_request_id: item.id, approve: yes });
      };
      card.append(
        el("header", {}, el("strong", {}, `Approve ${item.server_label} · ${item.name}?`)),
        el("pre", { class: "arguments" }, pretty(item.arguments || "")),
        open ? el("div", { class: "row" },
          el("button", { type: "button", class: "primary", onclick: () => approve(true) }, "Approve"),
          el("button", { type: "button", onclick: () => approve(false) }, "Deny")) : null,
      );
      return card;
    }
    return elicitationCard(item, open, (answer) => {
      this.onAnswer({ type: "mcp_elicitation_response", elicitation_request_id: item.id, ...answer });
    });
  }

  // Streams one response; returns the final Response object, or null if it failed or
  // was stopped (the page's Stop aborts `signal`, which ends the chat on the server).
  async stream(body, signal) {
    const started = performance.now();
    const turn = new Map(); // output_index -> {item, node, ...}
    let final = null;
    let response;
    try {
      response = await request("/v1/responses", { method: "POST", body: { ...body, stream: true }, signal });
      if (!response.ok) {
        const data = await response.json().catch(() => null);
        this.note(errorText(data, response.status), "error");
        return null;
      }
      for await (const event of events(response)) {
        final = this.apply(event, turn) || final;
      }
    } catch (error) {
      if (signal.aborted) this.note("Stopped.", "note stopped");
      else this.note(`The stream broke: ${error.message}`, "error");
      return null;
    }
    if (final) this.footer(final, performance.now() - started);
    return final;
  }

  apply(event, turn) {
    const at = turn.get(event.output_index);
    switch (event.type) {
      case "response.output_item.added":
        turn.set(event.output_index, this.opened(event.item));
        return null;
      case "response.output_text.delta":
      case "response.reasoning_text.delta":
        if (at) at.text.textContent += event.delta;
        return null;
      case "response.mcp_call_arguments.delta":
        if (at && at.card) at.card.writing(event.delta);
        return null;
      case "response.mcp_call_arguments.done":
        if (at && at.card) at.card.arguments(event.arguments);
        return null;
      case "response.output_item.done":
        if (at && at.card) this.callDone(at.card, event.item);
        return null;
      case "response.completed":
      case "response.incomplete":
        return event.response;
      case "response.failed":
        this.note((event.response.error && event.response.error.message) || "The response failed.", "error");
        return null;
      default:
        return null;
    }
  }

  callDone(card, item) {
    if (item.status === "incomplete") {
      // Written, but the loop never ran it (a repeat, or a turn written again).
      card.node.remove();
      this.cards.delete(item.id);
      return;
    }
    card.finish(item);
    this.callRan(item);
  }

  opened(item) {
    const written = item.type === "message" || item.type === "reasoning";
    if (written || (item.type === "mcp_call" && !this.cards.has(item.id))) this.modelWrites();
    if (item.type === "message") {
      const text = el("div", { class: "text" });
      this.add(el("div", { class: "message assistant" }, el("div", { class: "who" }, "Assistant"), text));
      return { text };
    }
    if (item.type === "reasoning") {
      const r = reasoningNode();
      this.add(r.node);
      return r;
    }
    if (item.type === "mcp_call") {
      return { card: this.card(item) };
    }
    if (item.type === "mcp_approval_request" || item.type === "mcp_elicitation_request") {
      this.add(this.question(item, true));
      return {};
    }
    if (item.type === "mcp_list_tools") {
      this.note(`${item.server_label}: tools listed`);
    }
    return {};
  }

  footer(final, millis) {
    const usage = final.usage;
    const rounds = final.farmhand && final.farmhand.rounds;
    const parts = [];
    if (usage) parts.push(`${usage.input_tokens} tokens in, ${usage.output_tokens} out`);
    if (rounds) parts.push(`${rounds} tool round${rounds === 1 ? "" : "s"}`);
    parts.push(`${(millis / 1000).toFixed(2)} s`);
    this.add(el("p", { class: "turn-stats muted" }, parts.join(" · ")));
  }
}
