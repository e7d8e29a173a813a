// Talking to farmhand: the API key (kept for this tab only), JSON calls, and SSE streams.
const KEY = "farmhand.apiKey";
let askForKey = null;

export function onKeyNeeded(ask) {
  askForKey = ask;
}

export function setApiKey(key) {
  sessionStorage.setItem(KEY, key);
}

export async function request(path, { method = "GET", body, signal } = {}) {
  for (;;) {
    const headers = {};
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const key = sessionStorage.getItem(KEY);
    if (key) headers.Authorization = `Bearer ${key}`;
    const init = { method, headers, signal };
    if (body !== undefined) init.body = JSON.stringify(body);
    const response = await fetch(path, init);
    if (response.status !== 401 || !askForKey) return response;
    await askForKey();
  }
}

export function errorText(data, status) {
  const error = data && data.error;
  if (typeof error === "string") return error;
  if (error && error.message) return error.message;
  return `the server answered ${status}`;
}

export async function json(path, options) {
  const response = await request(path, options);
  const data = await response.json().catch(() => null);
  if (!response.ok) throw new Error(errorText(data, response.status));
  return data;
}

// The `data:` objects of a server-sent event stream, as they arrive.
export async function* events(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value.replaceAll("\r\n", "\n");
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("\n");
      if (data && data !== "[DONE]") yield JSON.parse(data);
      end = buffer.indexOf("\n\n");
    }
  }
}

// A tiny element builder: el("div", {class: "x"}, child, "text").
export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === false || value === null || value === undefined) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}
