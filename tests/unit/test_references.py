"""Reference lists: splitting, parsing the common styles, title normalisation, resolution to corpus papers."""

from __future__ import annotations

import pytest

from lit3r.corpus.references import normalise_title, parse_reference, resolve_references, split_reference_list
from lit3r.models import Paper, Reference


@pytest.mark.parametrize(
    ("raw", "title", "authors", "year"),
    [
        (
            "Ada Lovelace and Alan Turing. 2023. Dense Passage Retrieval for Papers. In Proceedings of ACL.",
            "Dense Passage Retrieval for Papers",
            ["Ada Lovelace", "Alan Turing"],
            2023,
        ),
        (
            "Yidong Wang, Qi Guo, Wenjin Yao, et al. 2024b. Autosurvey: Large language models can write surveys. "
            "arXiv preprint arXiv:2406.10252.",
            "Autosurvey: Large language models can write surveys",
            ["Yidong Wang", "Qi Guo", "Wenjin Yao"],
            2024,
        ),
        (
            "Lovelace, A., & Turing, A. (2023). Dense passage retrieval for papers. ACL.",
            "Dense passage retrieval for papers",
            ["Lovelace, A.", "Turing, A."],
            2023,
        ),
        (
            "[12] A. Lovelace, B. Turing, and C. D. Babbage. Title of the Work: A Study. arXiv, 2023.",
            "Title of the Work: A Study",
            ["A. Lovelace", "B. Turing", "C. D. Babbage"],
            2023,
        ),
        (
            "Ada Lovelace, Alan Turing. Dense Passage Retrieval for Papers. ACL, 2023.",
            "Dense Passage Retrieval for Papers",
            ["Ada Lovelace", "Alan Turing"],
            2023,
        ),
        (
            "(9) Wellawatte, G. P.; Seshadri, A.; White, A. D. Model agnostic generation of counterfactual "
            "explanations for molecules. Chemical Science 2022, 13, 3697–3705.",
            "Model agnostic generation of counterfactual explanations for molecules",
            ["Wellawatte, G. P.", "Seshadri, A.", "White, A. D."],
            2022,
        ),
        (
            'A. Lovelace and A. Turing, "Dense passage retrieval for papers," in Proc. ACL, 2023.',
            "Dense passage retrieval for papers",
            ["A. Lovelace", "A. Turing"],
            2023,
        ),
        (
            "OpenAI. 2023. Gpt-4 technical report. arXiv preprint arXiv:2303.08774.",
            "Gpt-4 technical report",
            ["OpenAI"],
            2023,
        ),
        (
            "(15) Murdoch, W. J.; Yu, B. Interpretable machine learning. ArXiv 2019, abs/1901.04592.",
            "Interpretable machine learning",
            ["Murdoch, W. J.", "Yu, B."],
            2019,
        ),
        (
            "(13) On scientific understanding with artificial intelligence. Nature Reviews Physics 2022, 4, 761.",
            "On scientific understanding with artificial intelligence",
            [],
            2022,
        ),
    ],
)
def test_parse_reference_styles(raw: str, title: str, authors: list[str], year: int) -> None:
    reference = parse_reference(raw)
    assert (reference.title, reference.authors, reference.year) == (title, authors, year)
    assert reference.raw == " ".join(raw.split())


def test_unparseable_reference_keeps_its_raw_text() -> None:
    reference = parse_reference("  12, 44--46  ")
    assert (reference.raw, reference.title, reference.authors, reference.year) == ("12, 44--46", None, [], None)


def test_split_numbered_entries_with_wrapped_lines() -> None:
    text = "[1] A. Author. First title\nwrapped here. ACL, 2020.\n[2] B. Author. Second retrie-\nval title. 2021.\n"
    assert split_reference_list(text) == [
        "[1] A. Author. First title wrapped here. ACL, 2020.",
        "[2] B. Author. Second retrieval title. 2021.",
    ]


def test_split_numbered_entries_ignores_years_at_line_starts() -> None:
    text = "1. A. Author. Title one. 2020.\n2. B. Author. Title two, vol. 3,\n2019. pages 1-2.\n3. C. Author. Three."
    assert [entry[:2] for entry in split_reference_list(text)] == ["1.", "2.", "3."]


def test_split_hanging_author_entries() -> None:
    text = (
        "Zhihan Liu, Hao Hu, and Zhaoran Wang. 2023. Reason for\n"
        "future, act for now: A principled framework for au-\n"
        "tonomous agents. arXiv preprint arXiv:2309.17382.\n"
        "Chris Lu, Cong Lu, and David Ha. 2024. The ai scientist.\n"
        "Nature Machine Intelligence, pages 1–11.\n"
        "OpenAI. 2023. Gpt-4 technical report. arXiv preprint\n"
        "arXiv:2303.08774.\n"
    )
    entries = split_reference_list(text)
    assert len(entries) == 3
    assert entries[0].endswith("A principled framework for autonomous agents. arXiv preprint arXiv:2309.17382.")
    assert (
        entries[1]
        == "Chris Lu, Cong Lu, and David Ha. 2024. The ai scientist. Nature Machine Intelligence, pages 1–11."
    )
    assert entries[2].startswith("OpenAI. 2023.")


def test_split_on_blank_lines_trusts_the_layout() -> None:
    text = "Ada Lovelace. 2023. One.\nNature Physics, 12.\n\nAlan Turing. 1950. Two. Mind."
    assert split_reference_list(text) == [
        "Ada Lovelace. 2023. One. Nature Physics, 12.",
        "Alan Turing. 1950. Two. Mind.",
    ]
    assert split_reference_list("   \n ") == []


def test_normalise_title() -> None:
    assert normalise_title("  Déjà Vu: A  Study of BERT's Échecs!  ") == "deja vu a study of bert s echecs"
    assert normalise_title("Ｆｕｌｌ-width—and–dashes") == "full width and dashes"


def _paper(paper_id: str, title: str, *references: Reference) -> Paper:
    return Paper(id=paper_id, title=title, references=list(references))


def test_resolve_references_by_normalised_title() -> None:
    target = _paper("dense", "Dense Passage Retrieval for Papers")
    other = _paper("turing", "Computing Machinery and Intelligence")
    citing = _paper(
        "citing",
        "A Survey",
        Reference(raw="x", title="Dense passage retrieval for papers."),
        Reference(raw="Turing, A. 1950. Computing machinery and intelligence! Mind."),  # no parsed title
        Reference(raw="y", title="A Survey"),  # its own title: never resolved to itself
        Reference(raw="z", title="Something Else Entirely"),
        Reference(raw="Short title mention: Dense"),
    )
    self_citing = _paper(
        "dense-v2", "Dense Passage Retrieval for Papers", Reference(raw="r", title="Dense Passage Retrieval for Papers")
    )
    assert resolve_references([target, other, citing, self_citing]) == 3
    assert [r.resolved_id for r in citing.references] == ["dense", "turing", None, None, None]
    assert self_citing.references[0].resolved_id == "dense"  # a duplicate title, but not itself
    assert citing.resolved_references == ["dense", "turing"]


def test_loose_match_needs_a_long_title() -> None:
    short = _paper("short", "Graph Nets")
    citing = _paper("citing", "Citing", Reference(raw="Smith. 2020. We used Graph Nets here."))
    assert resolve_references([short, citing]) == 0
    assert citing.references[0].resolved_id is None
