// Citations: the hover card (quote, paper title, section, page) and the evidence panel (the passage on its
// PDF page with the span highlighted, or the chunk inside its section's text).
import { api, describe, esc, imageUrl } from "./api.js";
import { paperTitle, papers } from "./state.js";

const card = document.getElementById("card");
const panel = document.getElementById("evidence");
const body = document.getElementById("evidence-body");
let opener = null;
let lastImage = null;

let returning = null; // the chip focus goes back to as the panel closes: its focus must not reopen the card

export function showCard(chip, citation) {
  if (chip === returning) return;
  const where = describe(citation.locator) || "no page or section recorded";
  card.innerHTML = `
    <div><strong class="card-title">${esc(paperTitle(citation.paper_id))}</strong></div>
    <div class="where"><span class="card-where">${esc(where)}</span> · <code>${esc(citation.paper_id)}</code></div>
    <blockquote class="quote">${esc(citation.quote)}</blockquote>
    <div class="where">Click or press Enter to see the passage.</div>`;
  card.hidden = false;
  const box = chip.getBoundingClientRect();
  const width = Math.min(416, window.innerWidth - 16);
  card.style.left = `${Math.max(8, Math.min(box.left, window.innerWidth - width - 8))}px`;
  const below = box.bottom + 8;
  card.style.top = `${below}px`;
  const height = card.getBoundingClientRect().height;
  if (below + height > window.innerHeight - 8) card.style.top = `${Math.max(8, box.top - height - 8)}px`;
}

export function hideCard() {
  card.hidden = true;
}

export function closeEvidence() {
  if (panel.hidden) return;
  panel.hidden = true;
  if (lastImage) URL.revokeObjectURL(lastImage);
  lastImage = null;
  if (opener) {
    returning = opener;
    opener.focus();
    returning = null;
  }
}

document.getElementById("evidence-close").addEventListener("click", closeEvidence);
document.addEventListener("keydown", (e) => {
  if (e.key === "Escape") {
    hideCard();
    closeEvidence();
  }
});

export async function openEvidence(chip, citation) {
  opener = chip;
  hideCard();
  panel.hidden = false;
  document.getElementById("evidence-title").textContent = `[${citation.number}] ${paperTitle(citation.paper_id)}`;
  document.getElementById("evidence-where").textContent = describe(citation.locator);
  body.innerHTML = `<p class="muted"><span class="working"></span>Loading the passage…</p>`;
  body.dataset.chunk = citation.chunk_id;
  try {
    const paper = papers.get(citation.paper_id);
    if (paper && paper.has_pdf) await showPage(citation);
    else await showSection(citation, "");
  } catch (err) {
    if (err.code && ["no_pdf", "pdf_missing", "pdf_changed", "no_page"].includes(err.code)) {
      await showSection(citation, err.message);
    } else {
      body.innerHTML = `<p class="error">Could not load the passage: ${esc(err.message)}</p>`;
    }
  }
  body.focus();
}

async function showPage(citation) {
  const id = encodeURIComponent(citation.chunk_id);
  const quote = encodeURIComponent(citation.quote);
  const passage = await api(`/v1/chunks/${id}/page?quote=${quote}`);
  const url = await imageUrl(passage.image);
  if (lastImage) URL.revokeObjectURL(lastImage);
  lastImage = url;
  const boxes = passage.boxes
    .map(([x0, top, x1, bottom]) => {
      const style = `left:${(100 * x0) / passage.width}%;top:${(100 * top) / passage.height}%;` +
        `width:${(100 * (x1 - x0)) / passage.width}%;height:${(100 * (bottom - top)) / passage.height}%`;
      return `<span class="hl" style="${style}"></span>`;
    })
    .join("");
  const found = {
    exact: "The quoted passage is outlined on the page.",
    partial: "The passage continues beyond this page; its beginning is outlined.",
    none: "The quote could not be located on this page; the page of the chunk is shown.",
  }[passage.found];
  body.innerHTML = `
    <p class="note">Page ${passage.page}. ${esc(found)}</p>
    <div class="page" data-found="${passage.found}" data-matched="${esc(passage.matched_text)}">
      <img alt="Page ${passage.page} of ${esc(paperTitle(citation.paper_id))}, the cited passage highlighted" src="${url}">
      ${boxes}
    </div>
    <blockquote class="quote">${esc(citation.quote)}</blockquote>`;
  const first = body.querySelector(".hl");
  if (first) body.querySelector("img").addEventListener("load", () => first.scrollIntoView({ block: "center" }));
}

// The quote inside the chunk text, marked; whitespace may differ between the two.
export function markQuote(text, quote) {
  const at = text.indexOf(quote);
  if (at >= 0) return esc(text.slice(0, at)) + `<mark>${esc(quote)}</mark>` + esc(text.slice(at + quote.length));
  const words = quote.split(/\s+/).filter(Boolean).map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const match = words.length ? new RegExp(words.join("\\s+")).exec(text) : null;
  if (!match) return esc(text);
  const end = match.index + match[0].length;
  return esc(text.slice(0, match.index)) + `<mark>${esc(match[0])}</mark>` + esc(text.slice(end));
}

async function showSection(citation, why) {
  const paper = await api(`/v1/papers/${encodeURIComponent(citation.paper_id)}`);
  const section = paper.sections.find((s) => s.chunks.some((c) => c.chunk_id === citation.chunk_id));
  const chunks = section ? section.chunks : [];
  const parts = chunks.map((c) => {
    const cited = c.chunk_id === citation.chunk_id;
    const html = cited ? markQuote(c.text, citation.quote) : esc(c.text);
    return `<div class="chunk${cited ? " cited" : ""}" data-chunk="${esc(c.chunk_id)}">${html}</div>`;
  });
  const heading = section && section.heading ? section.heading : "Title and abstract";
  const note = why ? `${why}. ` : "This paper has no PDF here. ";
  body.innerHTML = `
    <p class="note">${esc(note)}The cited passage is marked in its section.</p>
    <div class="section-text"><h3>${esc(heading)}</h3>${parts.join("")}</div>`;
  const mark = body.querySelector("mark") || body.querySelector(".cited");
  if (mark) mark.scrollIntoView({ block: "center" });
}
