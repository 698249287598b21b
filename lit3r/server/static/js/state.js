// What the views share: the papers of the index in use (titles for citation cards) and the banner.
import { api } from "./api.js";

export const papers = new Map();

export async function loadPapers() {
  papers.clear();
  const { papers: list } = await api("/v1/papers");
  for (const paper of list) papers.set(paper.paper_id, paper);
  return list;
}

export function paperTitle(id) {
  return papers.has(id) ? papers.get(id).title : id;
}

const banner = document.getElementById("banner");

export function notify(message, kind = "error") {
  banner.textContent = message;
  banner.className = `banner ${kind === "error" ? "" : "info"}`;
  banner.hidden = !message;
}

export function clearNotice() {
  notify("");
}

// A handler for failed calls: a 401 asks for the key, others say what went wrong.
export function reportError(err, doing) {
  if (err.status === 401) {
    notify(`${err.message}. Set the API key (Key, top right).`);
    document.dispatchEvent(new CustomEvent("lit3r:need-key"));
  } else if (err.status === 429) {
    notify(`The server is busy (${err.message}). Try again in a moment.`);
  } else {
    notify(`Could not ${doing}: ${err.message}`);
  }
}
