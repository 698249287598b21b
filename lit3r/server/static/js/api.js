// The API client: JSON calls with the bearer key, server-sent events over fetch (EventSource cannot send
// headers), images as object URLs, and uploads with progress.

const KEY = "lit3r.apiKey";

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function getKey() {
  return localStorage.getItem(KEY) || "";
}

export function setKey(value) {
  if (value) localStorage.setItem(KEY, value);
  else localStorage.removeItem(KEY);
}

function headers(extra = {}) {
  const out = { ...extra };
  const key = getKey();
  if (key) out.Authorization = `Bearer ${key}`;
  return out;
}

async function failure(response) {
  let code = "http_" + response.status;
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body && body.error) {
      code = body.error.code || code;
      message = body.error.message || message;
    }
  } catch (_) { /* not JSON */ }
  return new ApiError(response.status, code, message);
}

export async function api(path, { method = "GET", body } = {}) {
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, "network", `cannot reach the server (${err.message})`);
  }
  if (!response.ok) throw await failure(response);
  return response.status === 204 ? null : response.json();
}

// POST (or GET) and read the response as server-sent events; onEvent(name, data) for each event.
export async function stream(path, { method = "POST", body, onEvent, signal } = {}) {
  const init = { method, headers: headers(body === undefined ? {} : { "Content-Type": "application/json" }), signal };
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    throw new ApiError(0, "network", `cannot reach the server (${err.message})`);
  }
  if (!response.ok) throw await failure(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n?/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const [field, ...rest] = line.split(":");
        const text = rest.join(":").replace(/^ /, "");
        if (field === "event") event = text;
        else if (field === "data") data.push(text);
      }
      if (data.length) onEvent(event, JSON.parse(data.join("\n")));
    }
  }
}

export async function imageUrl(path) {
  const response = await fetch(path, { headers: headers() });
  if (!response.ok) throw await failure(response);
  return URL.createObjectURL(await response.blob());
}

// Upload files as multipart form data; onProgress(fraction) while the body is sent.
export function upload(path, files, onProgress) {
  return new Promise((resolve, reject) => {
    const form = new FormData();
    for (const file of files) form.append("files", file, file.name);
    const xhr = new XMLHttpRequest();
    xhr.open("POST", path);
    const key = getKey();
    if (key) xhr.setRequestHeader("Authorization", `Bearer ${key}`);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onerror = () => reject(new ApiError(0, "network", "the upload could not reach the server"));
    xhr.onload = () => {
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch (_) { /* not JSON */ }
      if (xhr.status >= 200 && xhr.status < 300) resolve(body);
      else {
        const error = (body && body.error) || {};
        reject(new ApiError(xhr.status, error.code || `http_${xhr.status}`, error.message || xhr.statusText));
      }
    };
    xhr.send(form);
  });
}

export function esc(text) {
  return String(text ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

export function describe(locator) {
  const parts = [];
  if (!locator) return "";
  if (locator.page != null) parts.push(`p. ${locator.page}`);
  if (locator.section) parts.push(`§ ${locator.section}`);
  if (locator.object_id) parts.push(locator.object_id);
  return parts.join(" · ");
}

// A quoted table row's cell (the citation's `cell`): "row 5 (Reciprocal rank fusion) · Recall@10 = 0.63".
export function describeCell(cell) {
  if (!cell) return "";
  const parts = [`row ${cell.row}` + (cell.row_label ? ` (${cell.row_label})` : "")];
  if (cell.column) parts.push(cell.value != null ? `${cell.column} = ${cell.value}` : cell.column);
  return parts.join(" · ");
}
