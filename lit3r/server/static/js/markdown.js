// Answers as Markdown, safely: the text is HTML-escaped first, so nothing a paper or a model wrote becomes
// markup; then the few constructs answers use are rendered from the escaped text: paragraphs, bullet and
// numbered lists, **strong**, *emphasis*, `code` and pipe tables. Links are not rendered (a URL stays text).
import { esc } from "./api.js";

function inline(text) {
  return text
    .replace(/`([^`\n]+)`/g, "<code>$1</code>")
    .replace(/\*\*([^*\n]+)\*\*/g, "<strong>$1</strong>")
    .replace(/(^|[^*\w])\*([^*\s][^*\n]*?)\*(?!\w)/g, "$1<em>$2</em>");
}

const BULLET = /^\s*[-*•]\s+(.*)$/;
const NUMBERED = /^\s*\d+[.)]\s+(.*)$/;
const TABLE_ROW = /^\s*\|.*\|\s*$/;
const TABLE_RULE = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;

function cells(row) {
  return row.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => inline(c.trim()));
}

function table(rows) {
  const [head, , ...body] = rows;
  const th = cells(head).map((c) => `<th>${c}</th>`).join("");
  const trs = body.map((r) => `<tr>${cells(r).map((c) => `<td>${c}</td>`).join("")}</tr>`).join("");
  return `<table class="md-table"><thead><tr>${th}</tr></thead><tbody>${trs}</tbody></table>`;
}

// Markdown source -> HTML (escaped first; see the module comment).
export function markdownHtml(source) {
  const lines = esc(source).split("\n");
  const out = [];
  let paragraph = [];
  const flush = () => {
    if (paragraph.length) out.push(`<p>${inline(paragraph.join(" "))}</p>`);
    paragraph = [];
  };
  for (let i = 0; i < lines.length; ) {
    const line = lines[i];
    if (!line.trim()) {
      flush();
      i += 1;
    } else if (TABLE_ROW.test(line) && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1])) {
      flush();
      const rows = [];
      while (i < lines.length && (TABLE_ROW.test(lines[i]) || (rows.length === 1 && TABLE_RULE.test(lines[i])))) {
        rows.push(lines[i]);
        i += 1;
      }
      out.push(table(rows));
    } else if (BULLET.test(line) || NUMBERED.test(line)) {
      flush();
      const pattern = BULLET.test(line) ? BULLET : NUMBERED;
      const items = [];
      while (i < lines.length && pattern.test(lines[i])) {
        items.push(`<li>${inline(lines[i].match(pattern)[1])}</li>`);
        i += 1;
      }
      const tag = pattern === BULLET ? "ul" : "ol";
      out.push(`<${tag}>${items.join("")}</${tag}>`);
    } else {
      paragraph.push(line.trim());
      i += 1;
    }
  }
  flush();
  return out.join("");
}
