// The trace tab: traces newest first, and one trace's timeline (rounds, subqueries, rankings, verdicts, model
// calls with tokens and time), filterable by event type.
import { api, esc } from "./api.js";
import { compareControl, showDiff } from "./diff.js";
import { reportError } from "./state.js";

const listEl = document.getElementById("trace-list");
const detail = document.getElementById("trace-detail");
const TYPES = ["node", "tool", "decompose", "ranking", "verdict", "llm", "read", "verify", "rewrite", "hyde", "note", "fallback"];
let current = null;
let listed = [];

export async function loadTraces() {
  const { traces } = await api("/v1/traces?limit=100");
  listed = traces;
  document.getElementById("traces-empty").hidden = traces.length > 0;
  listEl.innerHTML = traces
    .map((t) => `<li><button type="button" data-trace="${esc(t.trace_id)}">${esc(t.question || t.trace_id)}` +
      `<small>${esc(t.trace_id)} · ${t.citations ?? 0} cit. · ${esc(t.stop_reason || "")}</small></button></li>`)
    .join("");
  mark();
}

listEl.addEventListener("click", (e) => {
  const target = e.target.closest("button[data-trace]");
  if (target) showTrace(target.dataset.trace);
});
document.getElementById("refresh-traces").addEventListener("click", () => loadTraces().catch((err) => reportError(err, "list traces")));

function mark() {
  for (const b of listEl.querySelectorAll("button")) b.setAttribute("aria-current", String(b.dataset.trace === current));
}

function ms(value) {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${Math.round(value)} ms`;
}

export async function showTrace(id) {
  if (!listed.some((t) => t.trace_id === id)) await loadTraces().catch(() => {}); // the comparison's choices
  current = id;
  mark();
  detail.innerHTML = `<p class="muted"><span class="working"></span>Loading trace ${esc(id)}…</p>`;
  let trace;
  try {
    trace = await api(`/v1/traces/${encodeURIComponent(id)}`);
  } catch (err) {
    detail.innerHTML = `<p class="error">Could not load the trace: ${esc(err.message)}</p>`;
    return;
  }
  const answer = trace.answer || {};
  const rows = trace.timeline || [];
  const llm = rows.filter((r) => r.type === "llm");
  const tokens = llm.reduce((n, r) => n + (r.tokens ? r.tokens.prompt + r.tokens.completion : 0), 0);
  const total = rows.length ? Math.max(...rows.map((r) => r.offset_ms + r.duration_ms)) : 0;
  const present = TYPES.filter((t) => rows.some((r) => r.type === t));
  detail.innerHTML = `
    <h2 id="trace-question">${esc(trace.question)}</h2>
    <dl class="facts">
      <dt>Answer</dt><dd>${esc((answer.text || "").slice(0, 400))}</dd>
      <dt>Stop</dt><dd>${esc(trace.stop_reason || "")} ${esc(trace.stop_detail || "")}</dd>
      <dt>Rounds</dt><dd>${answer.rounds ?? ""}</dd>
      <dt>Planner</dt><dd>${esc(trace.planner || "")}</dd>
      <dt>Time</dt><dd>${ms(total)} · ${rows.length} events</dd>
      <dt>Model calls</dt><dd>${llm.length} (${tokens} tokens)</dd>
      ${trace.thread_id ? `<dt>Thread</dt><dd><code>${esc(trace.thread_id)}</code></dd>` : ""}
    </dl>
    <fieldset class="filters"><legend class="visually-hidden">Event types</legend>
      ${present.map((t) => `<label><input type="checkbox" value="${t}" checked> ${t}</label>`).join("")}
    </fieldset>
    <section class="compare" aria-label="Compare two runs"><h3>Compare two runs</h3>
      ${compareControl({ trace_id: id, question: trace.question }, listed)}</section>
    <table class="timeline" aria-label="Timeline">
      <thead><tr><th scope="col">+time</th><th scope="col">type</th><th scope="col">name</th>
        <th scope="col">duration</th><th scope="col">tokens</th><th scope="col">what happened</th></tr></thead>
      <tbody>${timelineRows(rows)}</tbody>
    </table>`;
  const compare = detail.querySelector("#diff-form");
  if (compare) {
    compare.addEventListener("submit", (e) => {
      e.preventDefault();
      showDiff(id, detail.querySelector("#diff-other").value, detail.querySelector("#trace-diff"));
    });
  }
  detail.querySelector(".filters").addEventListener("change", () => {
    const shown = new Set([...detail.querySelectorAll(".filters input:checked")].map((i) => i.value));
    for (const tr of detail.querySelectorAll("tbody tr[data-type]")) tr.hidden = !shown.has(tr.dataset.type);
  });
}

function timelineRows(rows) {
  let round;
  const html = [];
  for (const row of rows) {
    if (row.round !== round) {
      round = row.round;
      html.push(`<tr class="round"><th colspan="6">${round == null ? "outside a round" : `round ${round}`}</th></tr>`);
    }
    const tokens = row.tokens ? `${row.tokens.prompt}+${row.tokens.completion}` : "";
    html.push(`<tr class="type-${esc(row.type)}" data-type="${esc(row.type)}">
      <td class="num">+${ms(row.offset_ms)}</td><td class="type">${esc(row.type)}</td><td>${esc(row.name)}</td>
      <td class="num">${ms(row.duration_ms)}</td><td class="num">${tokens}</td><td>${esc(row.summary)}</td></tr>`);
  }
  return html.join("");
}
