"""A table row states a direction about a claim: its value against the first row's, in the column the claim names."""

from __future__ import annotations

from lit3r.grounding.stance import OfflineStance, Passage
from lit3r.grounding.stance_features import Text
from lit3r.grounding.table_direction import row_direction, table_rows

TABLE = (
    "Table 1: Answer quality with and without the verification step.\n"
    "System | Accuracy | Unsupported claims\n"
    "Retrieve and answer | 0.61 | 18%\n"
    "+ verification, one round | 0.62 | 9%\n"
    "+ verification, up to three rounds | 0.64 | 6%"
)


def test_a_row_naming_the_claims_subject_moves_from_the_first_row_in_the_claims_column() -> None:
    rows = table_rows(TABLE)
    assert [r.cells[0] for r in rows] == ["Retrieve and answer", "+ verification, one round", rows[2].cells[0]]
    assert rows[0].header == ("System", "Accuracy", "Unsupported claims") and rows[0].caption.startswith("Table 1")
    accuracy = Text.of("Verification decreases answer accuracy.")
    unsupported = Text.of("Verification reduces unsupported claims.")
    assert [row_direction(accuracy, r) for r in rows] == [0, 1, 1]  # the first row is the baseline
    assert [row_direction(unsupported, r) for r in rows] == [0, -1, -1]
    assert row_direction(Text.of("Reranking lowers accuracy."), rows[1]) == 0  # the row does not name reranking
    assert row_direction(Text.of("Verification lowers recall."), rows[1]) == 0  # no column for recall
    assert table_rows("A caption.\nOne line | of cells") == [] and table_rows("Plain text.") == []


def test_a_claim_is_checked_against_the_rows_of_a_table() -> None:
    judge = OfflineStance()
    passages = [Passage("v::c0004", TABLE), Passage("v::c0002", "Answer accuracy is judged against the gold answers.")]
    against = judge.judge("The verification step decreases answer accuracy.", passages)
    assert against.verdict == "contradicts" and against.quotes
    assert all(q.quote in TABLE and q.quote.startswith("+ verification") for q in against.quotes)
    assert judge.judge("The verification step increases answer accuracy.", passages).verdict == "supports"


def test_two_tables_sharing_a_line_keep_their_own_header() -> None:
    from lit3r.grounding.table_direction import rows_by_line

    first = "Table 1: Recall.\nSystem | Recall\nBM25 | 0.44\nFusion | 0.63"
    second = "Table 2: Latency.\nSystem | Latency\nBM25 | 0.44\nFusion | 0.20"
    rows = rows_by_line([("a::c1", first), ("b::c2", second)])
    assert rows[("a::c1", "BM25 | 0.44")].header == ("System", "Recall")
    assert rows[("b::c2", "BM25 | 0.44")].header == ("System", "Latency")
