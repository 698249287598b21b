// Start-up: tabs (arrow keys move between them), the server status, the API key dialog, then each view.
import { api, getKey, setKey } from "./api.js";
import { initChat, loadCollections, loadThreads, showExamples } from "./chat.js";
import { initCheck, placeEvidence } from "./check.js";
import { initCorpus, renderPapers } from "./corpus.js";
import { notify, papers, reportError } from "./state.js";
import { loadTraces, showTrace } from "./trace.js";

const tabs = [...document.querySelectorAll('[role="tab"]')];
const dialog = document.getElementById("key-dialog");

export function select(tab) {
  for (const t of tabs) {
    const on = t === tab;
    t.setAttribute("aria-selected", String(on));
    t.tabIndex = on ? 0 : -1;
    document.getElementById(t.getAttribute("aria-controls")).hidden = !on;
  }
  placeEvidence(tab.id === "tab-check" ? "view-check" : "view-chat");
  if (tab.id === "tab-trace") loadTraces().catch((err) => reportError(err, "list traces"));
  if (tab.id === "tab-corpus") renderPapers().catch((err) => reportError(err, "list papers"));
}

for (const tab of tabs) {
  tab.addEventListener("click", () => select(tab));
  tab.addEventListener("keydown", (e) => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
    if (!step) return;
    const next = tabs[(tabs.indexOf(tab) + step + tabs.length) % tabs.length];
    next.focus();
    select(next);
  });
}

function askKey() {
  document.getElementById("key-input").value = getKey();
  if (!dialog.open) dialog.showModal();
}

document.getElementById("key-button").addEventListener("click", askKey);
document.addEventListener("lit3r:need-key", askKey);
dialog.addEventListener("close", () => {
  if (dialog.returnValue === "save") {
    setKey(document.getElementById("key-input").value.trim());
    start();
  }
});

const STATUS_EVERY_MS = 15000;

async function refreshStatus() {
  const el = document.getElementById("status");
  let status;
  try {
    status = await api("/v1/status");
  } catch (err) {
    el.textContent = err.status === 0 ? "server unreachable" : "status unknown"; // never a stale count
    throw err;
  }
  if (status.index) {
    el.textContent = `${status.index.papers} papers · ${status.index.chunks} chunks`;
  } else {
    el.textContent = "no index yet";
    notify("No papers are indexed yet: open the Corpus tab and upload some.", "info");
  }
  return status;
}

async function start() {
  let status = null;
  try {
    notify("");
    status = await refreshStatus();
    if (status.index) await Promise.all([renderPapers(), loadCollections()]);
    showExamples(papers);
    await loadThreads();
  } catch (err) {
    reportError(err, "reach the server");
  }
  initCorpus({
    status,
    onIndexed: async () => {
      await refreshStatus();
      await Promise.all([renderPapers(), loadCollections()]);
    },
  });
}

setInterval(() => refreshStatus().catch(() => {}), STATUS_EVERY_MS);

initCheck();
initChat({
  openTrace: (id) => {
    select(document.getElementById("tab-trace"));
    showTrace(id);
  },
});
start();
