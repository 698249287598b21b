"""A chunk cited by two sentences: each marker keeps its own sentence's quote (``Citation.quotes``), the merged
``quote`` still spans them, and the thread's renumbering keeps both."""

from __future__ import annotations

from lit3r.agent.state import stable_numbers
from lit3r.answers import MARKER
from lit3r.models import Chunk, Locator
from lit3r.reading.quotes import candidates, render

TEXT = (
    "Verification removed 41% of unsupported claims. The corpus has eight papers. "
    "Latency rose by 0.3 seconds per answer."
)


def test_each_marker_of_one_chunk_keeps_its_own_quote() -> None:
    chunk = Chunk(id="p::c1", paper_id="p", type="text", text=TEXT, locator=Locator(section="Results"))
    units = candidates([chunk])
    first, last = units[0], units[-1]
    assert first.text != last.text
    answer = render("What did verification change?", [first, last])
    assert len(answer.citations) == 1
    citation = answer.citations[0]
    assert citation.quotes == [first.text, last.text]
    assert all(q in TEXT for q in citation.quotes)
    assert citation.quote.startswith(first.text) and citation.quote.endswith(last.text)
    assert len(MARKER.findall(answer.text)) == len(citation.quotes), "one quote per marker, in marker order"
    renumbered, numbers = stable_numbers(answer, {"other::c9": 1})
    assert numbers["p::c1"] == 2 and renumbered.citations[0].quotes == citation.quotes
    assert renumbered.model_dump(mode="json")["citations"][0]["quotes"] == citation.quotes


def test_the_answer_document_carries_each_markers_quote() -> None:
    from lit3r.app.documents import answer_document

    chunk = Chunk(id="p::c1", paper_id="p", type="text", text=TEXT, locator=Locator(section="Results"))
    units = candidates([chunk])
    answer = render("What did verification change?", [units[0], units[-1]])
    document = answer_document(answer, {}).model_dump(mode="json")
    assert document["citations"][0]["quotes"] == [units[0].text, units[-1].text]
    assert document["citations"][0]["quote"] == answer.citations[0].quote
