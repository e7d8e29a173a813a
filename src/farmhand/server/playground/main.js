// The playground page: wires the transcript, the panel and the conversations together.
import { json, onKeyNeeded, setApiKey } from "./api.js";
import { Transcript } from "./chat.js";
import { conversationItems, listConversations } from "./conversations.js";
import { Panel } from "./panel.js";
import { listReports } from "./reports.js";

const $ = (id) => document.getElementById(id);
const ui = {
  model: $("model"),
  prompt: $("prompt"),
  send: $("send"),
  stop: $("stop"),
  status: $("status"),
  instructions: $("instructions"),
  temperature: $("temperature"),
  maxTokens: $("max-tokens"),
};
let previous = null; // the id of the response the next message continues
let running = null; // the AbortController of the response being streamed

const transcript = new Transcript($("transcript"), (answer) => send([answer]));
const panel = new Panel({ servers: $("servers"), tools: $("tools"), note: $("tools-note"), search: $("tool-search"), pattern: $("tool-pattern") });

onKeyNeeded(
  () =>
    new Promise((resolve) => {
      const dialog = $("key-dialog");
      const input = $("key-input");
      dialog.addEventListener(
        "close",
        () => {
          setApiKey(input.value.trim());
          resolve();
        },
        { once: true },
      );
      if (!dialog.open) dialog.showModal();
    }),
);

function status(text) {
  ui.status.textContent = text;
}

function settings() {
  const body = {};
  const instructions = ui.instructions.value.trim();
  if (instructions) body.instructions = instructions;
  if (ui.temperature.value !== "") body.temperature = Number(ui.temperature.value);
  if (ui.maxTokens.value !== "") body.max_output_tokens = Number(ui.maxTokens.value);
  const off = panel.disabled();
  if (off.length) body.disabled_mcp_servers = off;
  return body;
}

async function send(input) {
  if (running) return;
  running = new AbortController();
  ui.send.disabled = true;
  ui.stop.disabled = false;
  status("Answering…");
  const body = { model: ui.model.value, input, ...settings() };
  if (previous) body.previous_response_id = previous;
  try {
    const final = await transcript.stream(body, running.signal);
    if (final) previous = final.id;
    status(final ? "" : "");
  } finally {
    running = null;
    ui.send.disabled = false;
    ui.stop.disabled = true;
    refreshSide();
  }
}

function refreshSide() {
  listConversations($("conversations"), previous, open).catch((e) => status(e.message));
  listReports($("reports"), $("reports-note")).catch((e) => status(e.message));
  panel.refreshServers().catch((e) => status(e.message));
}

async function open(id) {
  if (running) return;
  const { items, response } = await conversationItems(id);
  transcript.clear();
  transcript.stored(items);
  previous = response.id;
  if ([...ui.model.options].some((o) => o.value === response.model)) ui.model.value = response.model;
  refreshSide();
}

$("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = ui.prompt.value.trim();
  if (!text || running) return;
  ui.prompt.value = "";
  transcript.user(text);
  send([{ type: "message", role: "user", content: text }]);
});

ui.prompt.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    $("composer").requestSubmit();
  }
});

ui.stop.addEventListener("click", () => running && running.abort());

$("new-chat").addEventListener("click", () => {
  if (running) running.abort();
  previous = null;
  transcript.clear();
  ui.prompt.focus();
  refreshSide();
});

async function start() {
  try {
    const models = await json("/v1/models");
    ui.model.replaceChildren(...models.data.map((m) => new Option(m.id, m.id)));
    refreshSide();
    await panel.listTools();
    status("");
  } catch (error) {
    status(error.message);
  }
}

start();
