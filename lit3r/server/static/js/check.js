// Check mode: POST /v1/check, then a table of papers (verdict, confidence, deciding sentences); clicking a
// sentence opens its passage (on its PDF page, or marked in its section) in the evidence panel.
import { api, describe } from "./api.js";
import { openEvidence } from "./evidence.js";
import { clearNotice, paperTitle, reportError } from "./state.js";

const form = document.getElementById("check-form");
const input = document.getElementById("claim");
const button = document.getElementById("check-button");
const summary = document.getElementById("check-summary");
const table = document.getElementById("check-table");
const traceLine = document.getElementById("check-trace");
const LABEL = { supports: "supports", contradicts: "contradicts", mixed: "mixed", not_addressed: "does not address" };

// The evidence panel lives in one view at a time: the chat's or the check's.
export function placeEvidence(viewId) {
  const panel = document.getElementById("evidence");
  const view = document.getElementById(viewId);
  if (panel && view && panel.parentElement !== view) view.appendChild(panel);
}

function cell(row, text, className) {
  const td = row.insertCell();
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function quoteButton(paper, quote, number) {
  const el = document.createElement("button");
  el.type = "button";
  el.className = `check-quote ${quote.role}`;
  const role = document.createElement("span");
  role.className = `role verdict ${quote.role}`;
  role.textContent = quote.role;
  const text = document.createElement("q");
  text.textContent = quote.quote;
  el.append(role, text);
  el.title = describe(quote.locator) || quote.chunk_id;
  const citation = { number, chunk_id: quote.chunk_id, paper_id: paper.paper_id, quote: quote.quote, locator: quote.locator };
  el.addEventListener("click", () => {
    placeEvidence("view-check");
    openEvidence(el, citation);
  });
  return el;
}

export function renderCheck(result) {
  summary.textContent = result.summary.message;
  const body = table.tBodies[0];
  body.replaceChildren();
  let number = 0;
  for (const paper of result.papers) {
    const row = body.insertRow();
    row.dataset.paper = paper.paper_id;
    row.dataset.verdict = paper.verdict;
    cell(row, paper.title || paperTitle(paper.paper_id));
    cell(row, LABEL[paper.verdict] || paper.verdict, `verdict ${paper.verdict}`);
    cell(row, paper.confidence.toFixed(2));
    const quotes = row.insertCell();
    for (const quote of paper.quotes) quotes.appendChild(quoteButton(paper, quote, ++number));
  }
  table.hidden = result.papers.length === 0;
  traceLine.textContent = result.trace_path ? `Trace: ${result.trace_path}` : "";
}

export function initCheck() {
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const claim = input.value.trim();
    if (!claim) return;
    button.disabled = true;
    summary.textContent = "Checking the claim against the papers…";
    try {
      clearNotice();
      const collection = document.getElementById("check-collection")?.value;
      const body = collection ? { claim, collections: [collection] } : { claim };
      renderCheck(await api("/v1/check", { method: "POST", body }));
    } catch (err) {
      summary.textContent = "";
      reportError(err, "check the claim");
    } finally {
      button.disabled = false;
    }
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      form.requestSubmit();
    }
  });
}
