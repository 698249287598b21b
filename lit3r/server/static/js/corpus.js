// The corpus tab: the papers of the index in use, one paper's sections, and uploads whose ingest and index
// job streams its progress (files parsed, chunks embedded, time left).
import { api, esc, stream, upload } from "./api.js";
import { loadPapers, notify, reportError } from "./state.js";

const table = document.querySelector("#papers tbody");
const detail = document.getElementById("paper-detail");
const form = document.getElementById("upload-form");
const files = document.getElementById("upload-files");
const button = document.getElementById("upload-button");
const bar = document.getElementById("upload-bar");
const stage = document.getElementById("upload-stage");
const eta = document.getElementById("upload-eta");
const wrap = document.getElementById("upload-progress");
const report = document.getElementById("upload-report");
let afterIngest = () => {};

form.addEventListener("submit", (e) => {
  e.preventDefault();
  send();
});

function size(bytes) {
  if (bytes >= 1048576) return `${Math.round(bytes / 1048576)} MB`;
  return `${Math.max(1, Math.round(bytes / 1024))} KB`;
}

export function initCorpus({ onIndexed, status }) {
  afterIngest = onIndexed;
  if (status) {
    files.accept = status.upload_types.join(",");
    document.getElementById("upload-help").textContent =
      `${status.upload_types.join(", ")}; at most ${size(status.max_upload_bytes)} per upload.`;
  }
}

export async function renderPapers() {
  let list = [];
  try {
    list = await loadPapers();
  } catch (err) {
    if (err.code !== "no_index") throw err;
  }
  document.getElementById("paper-count").textContent = list.length ? `(${list.length})` : "";
  document.getElementById("papers-empty").hidden = list.length > 0;
  document.getElementById("papers").hidden = list.length === 0;
  table.innerHTML = list
    .map((p) => `<tr><td><button type="button" data-paper="${esc(p.paper_id)}">${esc(p.title)}</button></td>
      <td><code>${esc(p.paper_id)}</code></td><td>${p.year ?? ""}</td><td>${p.chunks}</td>
      <td>${esc(p.source_format || "")}${p.has_pdf ? " (PDF)" : ""}</td></tr>`)
    .join("");
  return list;
}

table.addEventListener("click", async (e) => {
  const target = e.target.closest("button[data-paper]");
  if (!target) return;
  try {
    const paper = await api(`/v1/papers/${encodeURIComponent(target.dataset.paper)}`);
    detail.hidden = false;
    detail.innerHTML = `<h2>${esc(paper.title)}</h2>
      <p class="muted">${esc(paper.authors.join(", "))}${paper.venue ? ` · ${esc(paper.venue)}` : ""} ${paper.year ?? ""}</p>
      ${paper.sections.map((s) => `<h3>${esc(s.heading || "Title and abstract")}</h3>` +
        s.chunks.map((c) => `<p>${esc(c.text)}</p>`).join("")).join("")}`;
    detail.scrollIntoView({ block: "start" });
  } catch (err) {
    reportError(err, "open the paper");
  }
});

function progress(job) {
  const parts = [];
  if (job.files) parts.push(`files parsed ${job.files.done}/${job.files.total}`);
  if (job.chunks) parts.push(`chunks embedded ${job.chunks.done}/${job.chunks.total}`);
  stage.textContent = `${job.stage || job.state}: ${parts.join(", ") || "starting"}`;
  const count = job.stage === "embed chunks" ? job.chunks : job.stage === "embed papers" ? job.papers : job.files;
  if (count) bar.value = count.total ? (100 * count.done) / count.total : 100; // nothing to embed: done
  else bar.value = job.stage === "reload" ? 100 : 0;
  eta.textContent = job.eta_s != null ? `about ${Math.ceil(job.eta_s)} s left in this stage` : "";
}

function showReport(job) {
  const ingest = (job.result && job.result.ingest) || {};
  const index = (job.result && job.result.index) || {};
  const failed = ingest.failed || [];
  report.innerHTML = `
    <p class="good">Indexed: ${index.papers ?? "?"} papers, ${index.chunks ?? "?"} chunks
      (${index.chunks_embedded ?? 0} newly embedded).</p>
    ${(ingest.added || []).length ? `<p>Added: ${ingest.added.map(esc).join(", ")}</p>` : ""}
    ${(ingest.unchanged || []).length ? `<p class="muted">Unchanged: ${ingest.unchanged.map(esc).join(", ")}</p>` : ""}
    ${failed.length ? `<p class="bad">Not ingested:</p><ul class="bad">${failed
      .map(([name, problem]) => `<li><strong>${esc(name)}</strong>: ${esc(problem)}</li>`).join("")}</ul>` : ""}`;
}

async function send() {
  if (!files.files.length) return;
  button.disabled = true;
  report.innerHTML = "";
  wrap.hidden = false;
  stage.textContent = "Uploading…";
  bar.value = 0;
  try {
    const started = await upload("/v1/ingest", files.files, (f) => { bar.value = 100 * f; });
    if (started.rejected.length) {
      report.innerHTML = `<p class="bad">Refused:</p><ul class="bad">${started.rejected
        .map((r) => `<li><strong>${esc(r.name)}</strong>: ${esc(r.problem)}</li>`).join("")}</ul>`;
    }
    let final = null;
    await stream(`/v1/jobs/${started.job.job_id}/events`, {
      method: "GET",
      onEvent: (event, data) => {
        if (event === "progress") progress(data);
        else if (event === "done") final = data;
        else if (event === "error") throw Object.assign(new Error(data.error.message), data.error);
      },
    });
    if (!final) throw new Error("the job's progress stream ended early");
    progress(final);
    stage.textContent = "Done";
    const refused = report.innerHTML;
    showReport(final);
    report.insertAdjacentHTML("beforeend", refused);
    files.value = "";
    notify("The index was updated; new questions use it.", "info");
    await afterIngest();
  } catch (err) {
    stage.textContent = "Failed";
    report.insertAdjacentHTML("beforeend", `<p class="bad">${esc(err.message)}</p>`);
    reportError(err, "ingest the files");
  } finally {
    button.disabled = false;
  }
}
