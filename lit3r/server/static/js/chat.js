// The chat: threads, a question streamed through /v1/threads/{id}/messages/stream (its steps appear as they
// happen), answers with citation chips; when the library has collections, a picker in the ask form sends the
// chosen one with each question (the library filter `collections` of the message).
import { api, describe, describeCell, esc, stream } from "./api.js";
import { hideCard, openEvidence, showCard } from "./evidence.js";
import { markdownHtml } from "./markdown.js";
import { clearNotice, paperTitle, reportError } from "./state.js";

const list = document.getElementById("messages");
const threadList = document.getElementById("thread-list");
const form = document.getElementById("ask-form");
const input = document.getElementById("question");
const button = document.getElementById("ask-button");
const hero = document.getElementById("chat-empty");
const picker = document.getElementById("collection");
let threadId = null;
let onTrace = () => {};

// Questions about the bundled demo corpus, offered only when it is the corpus being served.
export const EXAMPLES = [
  "How much did evidence verification reduce unsupported claims?",
  "How many questions does LocatorQA contain?",
  "Which reranker budget is recommended?",
];
const DEMO_PAPER = "demo-evidence-verification";

export function showExamples(paperIds) {
  document.getElementById("examples").hidden = !paperIds.has(DEMO_PAPER);
}

// The library's collections (GET /v1/library) as the pickers' options (the ask form's and the check form's);
// hidden when there are none. A chosen collection is kept when it is still there after a re-index.
export async function loadCollections() {
  const { collections } = await api("/v1/library");
  for (const select of [picker, document.getElementById("check-collection")]) {
    if (!select) continue;
    const chosen = select.value;
    select.replaceChildren(new Option("All papers", ""), ...collections.map((name) => new Option(name, name)));
    select.value = collections.includes(chosen) ? chosen : "";
    select.hidden = collections.length === 0;
  }
}

export function initChat({ openTrace }) {
  onTrace = openTrace;
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    ask(input.value);
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      ask(input.value);
    }
  });
  document.getElementById("new-thread").addEventListener("click", () => {
    threadId = null;
    list.innerHTML = "";
    hero.hidden = false;
    markCurrent();
    input.focus();
  });
  const examples = document.getElementById("examples");
  examples.hidden = true;
  examples.innerHTML = EXAMPLES.map((q) => `<li><button type="button">${esc(q)}</button></li>`).join("");
  examples.addEventListener("click", (e) => {
    if (e.target.closest("button")) ask(e.target.closest("button").textContent);
  });
}

// The sidebar lists the threads the web UI made (those of the API and the chat-completions endpoint stay out),
// filtered by the search box's words in their titles; each has rename and delete buttons.
const threadSearch = document.getElementById("thread-search");
let searchTimer = null;

export async function loadThreads() {
  const params = new URLSearchParams({ origin: "ui" });
  const q = threadSearch.value.trim();
  if (q) params.set("q", q);
  const { threads } = await api(`/v1/threads?${params}`);
  const empty = document.getElementById("threads-empty");
  empty.hidden = threads.length > 0;
  empty.textContent = q ? "No thread matches." : "No conversations yet.";
  threadList.innerHTML = threads
    .map((t) => {
      const id = esc(t.thread_id);
      const name = esc(t.title || t.thread_id);
      return `<li><button type="button" data-thread="${id}" title="${esc(t.title)}">${name}</button>` +
        `<button type="button" class="thread-action" data-rename="${id}" aria-label="Rename ${name}" title="Rename">✎</button>` +
        `<button type="button" class="thread-action" data-delete="${id}" aria-label="Delete ${name}" title="Delete">✕</button></li>`;
    })
    .join("");
  markCurrent();
}

threadSearch.addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => loadThreads().catch((err) => reportError(err, "search the threads")), 200);
});

threadList.addEventListener("click", (e) => {
  const open = e.target.closest("button[data-thread]");
  if (open) openThread(open.dataset.thread).catch((err) => reportError(err, "open the thread"));
  const rename = e.target.closest("button[data-rename]");
  if (rename) renameThread(rename.dataset.rename).catch((err) => reportError(err, "rename the thread"));
  const remove = e.target.closest("button[data-delete]");
  if (remove) deleteThread(remove.dataset.delete).catch((err) => reportError(err, "delete the thread"));
});

async function renameThread(id) {
  const current = threadList.querySelector(`button[data-thread="${CSS.escape(id)}"]`)?.textContent || "";
  const title = window.prompt("New title of the thread", current);
  if (title === null || !title.trim()) return;
  await api(`/v1/threads/${encodeURIComponent(id)}`, { method: "PATCH", body: { title: title.trim() } });
  await loadThreads();
}

async function deleteThread(id) {
  const name = threadList.querySelector(`button[data-thread="${CSS.escape(id)}"]`)?.textContent || id;
  if (!window.confirm(`Delete the thread "${name}"? Its turns cannot be recovered.`)) return;
  await api(`/v1/threads/${encodeURIComponent(id)}`, { method: "DELETE" });
  if (id === threadId) {
    threadId = null;
    list.innerHTML = "";
    hero.hidden = false;
  }
  await loadThreads();
}

function markCurrent() {
  for (const b of threadList.querySelectorAll("button[data-thread]")) {
    b.setAttribute("aria-current", String(b.dataset.thread === threadId));
  }
}

async function openThread(id) {
  const thread = await api(`/v1/threads/${encodeURIComponent(id)}`);
  threadId = id;
  markCurrent();
  list.innerHTML = "";
  hero.hidden = thread.history.length > 0;
  for (const turn of thread.history) {
    addUser(turn.message || turn.question);
    const item = addBot();
    if (turn.trace_id) {
      const trace = await api(`/v1/traces/${turn.trace_id}`);
      for (const event of trace.events || []) addStep(item, event);
      const answer = trace.answer;
      renderAnswer(item, { ...answer, answer: answer.text, trace_id: turn.trace_id, message: turn.message });
    } else {
      renderAnswer(item, { answer: turn.answer, citations: [], question: turn.question, sufficient: true });
    }
  }
}

function addUser(text) {
  const li = document.createElement("li");
  li.className = "msg user";
  li.textContent = text;
  list.append(li);
  return li;
}

function addBot() {
  const li = document.createElement("li");
  li.className = "msg bot";
  li.innerHTML = `<div class="text"><span class="working"></span>Working…</div>
    <details class="steps" open><summary>Steps <span class="count">0</span></summary><ol></ol></details>`;
  list.append(li);
  li.scrollIntoView({ block: "end" });
  return li;
}

// A step's summary as words: a JSON summary becomes "key value, key value" (nested values shortened).
export function summaryText(summary) {
  if (summary == null) return "";
  let value = summary;
  if (typeof value === "string") {
    const text = value.trim();
    if (!/^[{[]/.test(text)) return text;
    try {
      value = JSON.parse(text);
    } catch (_) {
      return text;
    }
  }
  const short = (v) => {
    if (Array.isArray(v)) return v.length <= 3 ? v.map(short).join(", ") : `${v.length} items`;
    if (v && typeof v === "object") return Object.keys(v).length + " fields";
    return String(v);
  };
  if (Array.isArray(value)) return short(value);
  return Object.entries(value).map(([k, v]) => `${k.replace(/_/g, " ")} ${short(v)}`).join(", ");
}

function addStep(item, step) {
  const ol = item.querySelector(".steps ol");
  const li = document.createElement("li");
  const round = step.round ? `r${step.round}` : "--";
  const tokens = step.tokens ? ` ${step.tokens.prompt}+${step.tokens.completion} tok` : "";
  const ms = step.duration_ms != null ? ` ${Math.round(step.duration_ms)} ms` : "";
  li.textContent = `${round} ${step.type} ${step.name}${ms}${tokens} · ${summaryText(step.summary)}`;
  li.title = li.textContent;
  ol.append(li);
  ol.scrollTop = ol.scrollHeight;
  item.querySelector(".steps .count").textContent = ol.children.length;
}

// The answer text with each [n] marker as a chip that shows its citation.
export function answerHtml(text, citations) {
  const byNumber = new Map(citations.map((c) => [String(c.number), c]));
  return markdownHtml(text).replace(/\[(\d+)\]/g, (whole, n) =>
    byNumber.has(n)
      ? `<button type="button" class="chip" data-n="${n}" aria-label="Citation ${n}">${n}</button>`
      : whole);
}

function renderAnswer(item, doc) {
  const citations = doc.citations || [];
  const text = item.querySelector(".text");
  text.classList.toggle("abstain", doc.sufficient === false);
  text.innerHTML = answerHtml(doc.answer, citations);
  if (doc.message && doc.question && doc.question !== doc.message) {
    text.insertAdjacentHTML("beforebegin", `<p class="standalone">Answered as: ${esc(doc.question)}</p>`);
  }
  const byNumber = new Map(citations.map((c) => [String(c.number), c]));
  const chips = [...text.querySelectorAll(".chip")];
  const seen = new Map();
  for (const chip of chips) {
    // The k-th [n] shows its own sentence's quote (quotes[k]) when there is one quote per marker of n.
    const shared = byNumber.get(chip.dataset.n);
    const k = seen.get(chip.dataset.n) || 0;
    seen.set(chip.dataset.n, k + 1);
    const markers = chips.filter((c) => c.dataset.n === chip.dataset.n).length;
    const own = shared.quotes && shared.quotes.length === markers ? shared.quotes[k] : null;
    const citation = own ? { ...shared, quote: own } : shared;
    chip.addEventListener("mouseenter", () => showCard(chip, citation));
    chip.addEventListener("focus", () => showCard(chip, citation));
    chip.addEventListener("mouseleave", hideCard);
    chip.addEventListener("blur", hideCard);
    chip.addEventListener("click", () => openEvidence(chip, citation));
  }
  if (citations.length) item.append(sourcesList(citations));
  const steps = item.querySelector(".steps");
  if (steps) steps.open = false;
  const meta = document.createElement("div");
  meta.className = "meta";
  const claims = doc.claims || [];
  const supported = claims.filter((c) => c.supported).length;
  meta.innerHTML = [
    `${citations.length} citation${citations.length === 1 ? "" : "s"}`,
    claims.length ? `${supported}/${claims.length} claims supported` : "",
    doc.rounds != null ? `${doc.rounds} round${doc.rounds === 1 ? "" : "s"}` : "",
    assurance(doc),
  ].filter(Boolean).map((s) => `<span>${esc(s)}</span>`).join("");
  if (citations.length) {
    const copy = document.createElement("button");
    copy.type = "button";
    copy.className = "ghost copy-references";
    copy.textContent = "Copy with references";
    copy.addEventListener("click", () => copyWithReferences(copy, doc.answer, citations));
    meta.append(copy);
  }
  if (doc.trace_id) {
    const open = document.createElement("button");
    open.type = "button";
    open.className = "ghost open-trace";
    open.textContent = "Trace";
    open.addEventListener("click", () => onTrace(doc.trace_id));
    meta.append(open);
  }
  item.append(meta);
  item.dataset.trace = doc.trace_id || "";
}

// The numbered sources under an answer: paper, where, and the quote; each opens its passage.
function sourcesList(citations) {
  const ol = document.createElement("ol");
  ol.className = "sources";
  ol.setAttribute("aria-label", "Sources");
  for (const c of [...citations].sort((a, b) => a.number - b.number)) {
    const li = document.createElement("li");
    li.value = c.number;
    const where = [describe(c.locator), describeCell(c.cell)].filter(Boolean).join(" · ");
    li.innerHTML = `<button type="button" class="source" data-n="${esc(c.number)}">` +
      `<span class="source-title">${esc(paperTitle(c.paper_id))}</span>` +
      (where ? ` <span class="source-where">${esc(where)}</span>` : "") +
      `<q class="source-quote">${esc(c.quote)}</q></button>`;
    li.querySelector("button").addEventListener("click", (e) => openEvidence(e.currentTarget, c));
    ol.append(li);
  }
  return ol;
}

// The answer as Markdown with author-year citations and its reference list, on the clipboard.
async function copyWithReferences(button, answer, citations) {
  try {
    const { export: text } = await api("/v1/export", { method: "POST", body: { answer, citations, format: "markdown" } });
    await navigator.clipboard.writeText(text);
    button.textContent = "Copied";
  } catch (err) {
    reportError(err, "copy");
  }
}

async function ask(raw) {
  const message = raw.trim();
  if (!message || button.disabled) return;
  clearNotice();
  hero.hidden = true;
  input.value = "";
  button.disabled = true;
  addUser(message);
  const item = addBot();
  try {
    if (!threadId) {
      threadId = (await api("/v1/threads", { method: "POST", body: { origin: "ui" } })).thread_id;
    }
    let answered = false;
    await stream(`/v1/threads/${encodeURIComponent(threadId)}/messages/stream`, {
      body: picker.value ? { message, collections: [picker.value] } : { message },
      onEvent: (event, data) => {
        if (event === "step") addStep(item, data);
        else if (event === "answer") {
          answered = true;
          renderAnswer(item, data);
        } else if (event === "error") throw Object.assign(new Error(data.error.message), data.error);
      },
    });
    if (!answered) throw new Error("the stream ended without an answer");
  } catch (err) {
    item.classList.add("error");
    item.querySelector(".text").textContent = `No answer: ${err.message}`;
    reportError(err, "answer");
  } finally {
    if (threadId) loadThreads().catch(() => {}); // the thread exists even when its first turn failed
    button.disabled = false;
    input.focus();
  }
}

// Whether the answer supplies what was asked (its kind matched, its evidence found) and how sure the reader is:
// apart from "claims supported", which says only that the quotes stand in their chunks.
function assurance(doc) {
  const named = doc.unmentioned && doc.unmentioned.length ? `no paper read mentions ${doc.unmentioned.join(", ")}` : "";
  if (doc.sufficient === false) return named; // an abstention on names no paper read mentions says which
  let sure = doc.confidence != null ? ` · confidence ${Number(doc.confidence).toFixed(2)}` : "";
  if (named) sure += ` · ${named}`;
  if (doc.answers_question === true) return `answers the question${sure}`;
  if (doc.answers_question === false) return `may not answer the question${sure}`;
  return sure ? sure.slice(3) : "";
}
