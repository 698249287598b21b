// Two runs compared (GET /v1/traces/{a}/diff/{b}): where they first part, then answer, citations,
// subqueries, the rankings that moved, verdicts, tokens and time.
import { api, esc } from "./api.js";

function moves(ranking, limit = 6) {
  if (!ranking.moves.length) return "";
  const shown = ranking.moves.slice(0, limit).map((m) => {
    const from = m.rank_a ?? "–";
    const to = m.rank_b ?? "–";
    return `<li><code>${esc(m.id)}</code> ${from} → ${to}</li>`;
  });
  const more = ranking.moves.length > limit ? `<li class="muted">+${ranking.moves.length - limit} more</li>` : "";
  return `<ul class="moves">${shown.join("")}${more}</ul>`;
}

function listDiff(title, diff) {
  if (diff.same) return `<p><strong>${title}</strong>: the same (${diff.a.length}).</p>`;
  const side = (label, items) => (items.length ? `<li>${label}: ${items.map(esc).join("; ")}</li>` : "");
  return `<p><strong>${title}</strong> differ:</p><ul>${side("only A", diff.only_a)}${side("only B", diff.only_b)}</ul>`;
}

function numbers(title, table) {
  const rows = Object.entries(table)
    .map(([k, v]) => `<tr><td>${esc(k)}</td><td class="num">${Math.round(v.a)}</td><td class="num">${Math.round(v.b)}</td>` +
      `<td class="num">${v.delta > 0 ? "+" : ""}${Math.round(v.delta)}</td></tr>`)
    .join("");
  return `<table class="timeline"><caption>${title}</caption><thead><tr><th scope="col"></th><th scope="col">A</th>` +
    `<th scope="col">B</th><th scope="col">B − A</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function diffHtml(diff) {
  const head = diff.identical
    ? `<p class="good" id="diff-verdict">The two runs are identical: the same subqueries, rankings, pool, verdicts, answer and citations.</p>`
    : `<p class="bad" id="diff-verdict">They first part at: <strong>${esc(diff.first_difference)}</strong></p>`;
  const changed = diff.rankings.filter((r) => !r.same);
  const rankings = changed.length
    ? `<p><strong>Rankings that moved</strong> (${changed.length} of ${diff.rankings.length}):</p><ul class="diff-rankings">` +
      changed.map((r) => `<li>${esc(r.name)}${r.subquery ? ` <span class="muted">(${esc(r.subquery)})</span>` : ""}: ` +
        `overlap ${r.overlap.toFixed(2)}${moves(r)}</li>`).join("") + "</ul>"
    : `<p><strong>Rankings</strong>: all ${diff.rankings.length} the same.</p>`;
  const answer = diff.answer.same
    ? "<p><strong>Answer</strong>: the same.</p>"
    : `<p><strong>Answer</strong> differs:</p><dl class="facts"><dt>A</dt><dd>${esc(diff.answer.a)}</dd>` +
      `<dt>B</dt><dd>${esc(diff.answer.b)}</dd></dl>`;
  const citations = diff.citations.same
    ? `<p><strong>Citations</strong>: the same (${diff.citations.a.length}).</p>`
    : `<p><strong>Citations</strong> differ: chunks only in A: ${diff.citations.chunks_only_a.map(esc).join(", ") || "none"}; ` +
      `only in B: ${diff.citations.chunks_only_b.map(esc).join(", ") || "none"}.</p>`;
  const verdicts = diff.verdicts.filter((v) => !v.same).length;
  const steps = diff.steps.filter((s) => !s.same).length;
  return `${head}
    <dl class="facts"><dt>A</dt><dd><code>${esc(diff.a.trace_id)}</code> ${esc(diff.a.question)} · ${esc(diff.a.stop_reason || "")}</dd>
      <dt>B</dt><dd><code>${esc(diff.b.trace_id)}</code> ${esc(diff.b.question)} · ${esc(diff.b.stop_reason || "")}</dd></dl>
    ${answer}${citations}${listDiff("Subqueries", diff.subqueries)}${rankings}
    <p><strong>Final papers</strong>: ${diff.final_papers.same ? "the same" : `overlap ${diff.final_papers.overlap.toFixed(2)}`}${moves(diff.final_papers)}</p>
    <p><strong>Verdicts</strong>: ${verdicts ? `${verdicts} differ` : "the same"}. <strong>Steps</strong>: ${diff.steps.length} aligned, ${steps} differ.</p>
    ${numbers("Tokens", diff.tokens)}${numbers("Time (ms)", diff.time_ms)}`;
}

// The "compare with" control under a trace: other traces, those of the same question first.
export function compareControl(current, traces) {
  const others = traces.filter((t) => t.trace_id !== current.trace_id);
  if (!others.length) return `<p class="muted">Ask again to compare two runs.</p>`;
  const same = others.filter((t) => t.question === current.question);
  const rest = others.filter((t) => t.question !== current.question);
  const option = (t) => `<option value="${esc(t.trace_id)}">${esc(t.trace_id)} · ${esc((t.question || "").slice(0, 60))}</option>`;
  return `<form id="diff-form" class="filters"><label for="diff-other">Compare with</label>
      <select id="diff-other">${same.length ? `<optgroup label="same question">${same.map(option).join("")}</optgroup>` : ""}
        ${rest.length ? `<optgroup label="other questions">${rest.map(option).join("")}</optgroup>` : ""}</select>
      <button type="submit">Compare</button></form><div id="trace-diff" aria-live="polite"></div>`;
}

export async function showDiff(a, b, target) {
  target.innerHTML = `<p class="muted"><span class="working"></span>Comparing…</p>`;
  try {
    target.innerHTML = diffHtml(await api(`/v1/traces/${encodeURIComponent(a)}/diff/${encodeURIComponent(b)}`));
  } catch (err) {
    target.innerHTML = `<p class="bad">Could not compare: ${esc(err.message)}</p>`;
  }
}
