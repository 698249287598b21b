"""Claim verification without models: splitting answers into claims, the exact judge, verify_answer."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from lit3r.answers.validate import marker_problems
from lit3r.grounding.claims import split_claims
from lit3r.grounding.judge import Judge, Judgement
from lit3r.grounding.judges import ExactJudge, judge_kind, make_judge
from lit3r.grounding.judges.exact import normalise
from lit3r.grounding.verify import UNSUPPORTED_MARK, verify_answer
from lit3r.models import ABSTENTION, Answer, Citation, Locator
from lit3r.settings import GroundingSettings, Settings, index_key

CHUNKS = {
    "p1::c0001": "The Transformer reaches 28.4 BLEU on WMT14 English-German. Training took 3.5 days on 8 GPUs.",
    "p1::c0002": "Smith et al. report a 0.5 point gain, e.g. on newstest2014, over the best ensemble.",
    "p2::c0001": "| Model | BLEU |\n| Transformer (big) | 28.4 |\n| ByteNet | 23.75 |",
}


def cite(number: int, chunk_id: str, quote: str = "") -> Citation:
    """A citation quoting the opening of its chunk (or ``quote``)."""
    quote = quote or CHUNKS.get(chunk_id, "x")[:30]
    return Citation(number=number, chunk_id=chunk_id, paper_id=chunk_id.split("::")[0], locator=Locator(), quote=quote)


def answer(text: str, *citations: Citation, **fields) -> Answer:
    return Answer(question="What BLEU does the Transformer reach?", text=text, citations=list(citations), **fields)


class ScriptedJudge:
    """Supported iff the hypothesis contains none of ``refuted``; records every pair it is asked about."""

    name = "scripted"
    threshold = 0.5

    def __init__(self, *refuted: str) -> None:
        self.refuted = refuted
        self.pairs: list[tuple[str, str]] = []

    def judge(self, premise: str, hypothesis: str) -> Judgement:
        return self.judge_many([(premise, hypothesis)])[0]

    def judge_many(self, pairs: Sequence[tuple[str, str]]) -> list[Judgement]:
        self.pairs += pairs
        bad = [any(r in h for r in self.refuted) for _p, h in pairs]
        return [Judgement(not b, 0.1 if b else 0.9, "refuted" if b else "entailed") for b in bad]


# ---------------------------------------------------------------- claims


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # LLM style: marker before the period; marker groups and runs
            "It reaches 28.4 BLEU [1]. Smith et al. report a 0.5 gain, e.g. on newstest [2][3]. No source here.",
            [
                ("It reaches 28.4 BLEU.", (1,)),
                ("Smith et al. report a 0.5 gain, e.g. on newstest.", (2, 3)),
                ("No source here.", ()),
            ],
        ),
        (  # extractive style: marker after the period belongs to the sentence before it
            "It reaches 28.4 BLEU. [1] Training took 3.5 days. [1, 2]",
            [("It reaches 28.4 BLEU.", (1,)), ("Training took 3.5 days.", (1, 2))],
        ),
        (  # a table row quote has no period: the marker run ends it when a new sentence follows
            "| Transformer (big) | 28.4 | [1] It reaches 28.4 BLEU. [2]",
            [("| Transformer (big) | 28.4 |", (1,)), ("It reaches 28.4 BLEU.", (2,))],
        ),
        (  # quoted table rows, one marker each, whatever they start with
            "System | BLEU [1] + ensembles | 29.1 [1] 8 GPUs | 3.5 days [2]",
            [("System | BLEU", (1,)), ("+ ensembles | 29.1", (1,)), ("8 GPUs | 3.5 days", (2,))],
        ),
        (  # a marker inside a sentence does not end it
            "BLEU is 28.4 [1], and ByteNet scores 23.75 [2].",
            [("BLEU is 28.4, and ByteNet scores 23.75.", (1, 2))],
        ),
    ],
)
def test_split_claims(text: str, expected: list[tuple[str, tuple[int, ...]]]) -> None:
    claims = split_claims(answer(text, sufficient=True))
    assert [(c.text, c.citations) for c in claims] == expected
    assert all("[" not in c.text or "|" in c.text for c in claims)
    covered = "".join(text[c.start : c.end] for c in claims)  # spans cover every marker
    assert sorted(covered.count(f"[{n}") for n in (1, 2, 3)) == sorted(text.count(f"[{n}") for n in (1, 2, 3))


@pytest.mark.parametrize("text", [ABSTENTION])
def test_abstentions_make_no_claims(text: str) -> None:
    assert split_claims(answer(text, sufficient=False)) == []
    assert split_claims(answer(text, sufficient=True)) == []  # the message itself is no claim


def test_the_option_prefix_of_an_extractive_choice_is_no_part_of_the_claim() -> None:
    text = "28.4 — The Transformer reaches 28.4 BLEU on WMT14 English-German. [1]"
    (claim,) = split_claims(answer(text, sufficient=True, option="28.4"))
    assert claim.text == "The Transformer reaches 28.4 BLEU on WMT14 English-German." and claim.citations == (1,)


# ---------------------------------------------------------------- exact judge


def test_exact_judge_wants_a_verbatim_quote_up_to_space_case_and_quotes() -> None:
    judge = ExactJudge()
    assert isinstance(judge, Judge) and judge.name == "exact"
    premise = "He said \u201cBLEU   rises\u201d \u2014 by 0.5 points .\nThen it fell."
    assert judge.judge(premise, 'he said "BLEU rises" - by 0.5 points.') == Judgement(True, 1.0, "quoted")
    assert not judge.judge(premise, "BLEU rises by 0.6 points.").supported
    assert judge.judge(premise, "  ").reason == "empty claim"
    assert [j.supported for j in judge.judge_many([(premise, "then it fell."), (premise, "It rose.")])] == [True, False]
    assert normalise("A\u00a0B\u2013C") == "a b-c"


def test_extractive_answers_pass_the_exact_judge_whole() -> None:
    from lit3r.models import Chunk
    from lit3r.reading import extractive_answer

    chunks = [Chunk(id=cid, paper_id=cid.split("::")[0], type="text", text=t) for cid, t in CHUNKS.items()]
    chunks[2] = chunks[2].model_copy(update={"type": "table"})
    question = "What BLEU does the Transformer big reach on WMT14, and the gain over ensembles?"
    read = extractive_answer(question, chunks, max_sentences=3)
    assert read.sufficient and len(split_claims(read)) >= 2
    verified, verdicts = verify_answer(read, CHUNKS.get, ExactJudge())
    assert verified.text == read.text and verified.supported_fraction == 1.0
    assert all(v["reason"] == "quoted" for v in verdicts)


# ---------------------------------------------------------------- verify_answer

LLM_ANSWER = answer(
    "The Transformer reaches 28.4 BLEU [1]. It was trained on 1,000 TPUs [1]. Smith et al. report a 0.5 gain [2].",
    cite(1, "p1::c0001"),
    cite(2, "p1::c0002"),
    sufficient=True,
    rounds=2,
)


def test_remove_drops_the_sentence_its_citations_do_not_support_and_says_why() -> None:
    judge = ScriptedJudge("Smith")
    verified, verdicts = verify_answer(LLM_ANSWER, CHUNKS.get, judge, "remove")
    assert verified.text == "The Transformer reaches 28.4 BLEU [1]."
    assert [c.number for c in verified.citations] == [1] and verified.sufficient and verified.rounds == 2
    assert verified.supported_fraction == pytest.approx(1 / 3)
    assert [c.action for c in verified.claims] == ["kept", "removed", "removed"]
    assert verdicts[1] == {  # the guards refuse it before any judge: 1,000 is not in the chunk
        "claim": "It was trained on 1,000 TPUs.",
        "citations": [1],
        "chunk_ids": ["p1::c0001"],
        "supported": False,
        "score": 0.0,
        "reason": "number 1000 is not in the cited text",
        "action": "removed",
    }
    assert verdicts[2]["reason"] == "refuted"  # the judge's verdict
    assert judge.pairs == [  # full chunk text, not the quote; the guarded claim never reached the judge
        (CHUNKS["p1::c0001"], "The Transformer reaches 28.4 BLEU."),
        (CHUNKS["p1::c0002"], "Smith et al. report a 0.5 gain."),
    ]
    assert marker_problems(verified) == []


def test_remove_keeps_numbers_stable_and_drops_citations_nothing_uses() -> None:
    verified, _ = verify_answer(LLM_ANSWER, CHUNKS.get, ScriptedJudge("28.4"), "remove")
    assert verified.text == "Smith et al. report a 0.5 gain [2]."
    assert [c.number for c in verified.citations] == [2]  # not renumbered to 1
    assert verified.supported_fraction == pytest.approx(1 / 3)


def test_removing_every_claim_abstains_and_keeps_the_verdicts() -> None:
    verified, verdicts = verify_answer(LLM_ANSWER, CHUNKS.get, ScriptedJudge("."), "remove")
    assert verified.text == ABSTENTION and not verified.sufficient and verified.citations == []
    assert verified.supported_fraction == 0.0 and verified.rounds == 2
    assert [c.action for c in verified.claims] == ["removed"] * 3 and len(verdicts) == 3


def test_mark_keeps_every_sentence_and_marks_the_unsupported_one() -> None:
    verified, verdicts = verify_answer(LLM_ANSWER, CHUNKS.get, ScriptedJudge(), "mark")
    assert verified.text == (
        f"The Transformer reaches 28.4 BLEU [1]. It was trained on 1,000 TPUs [1]. {UNSUPPORTED_MARK} "
        "Smith et al. report a 0.5 gain [2]."
    )
    assert verified.citations == LLM_ANSWER.citations and verdicts[1]["action"] == "marked"
    assert verified.supported_fraction == pytest.approx(2 / 3)


def test_uncited_sentences_and_unknown_chunks_are_unsupported_without_asking_the_judge() -> None:
    judge = ScriptedJudge()
    text = "The Transformer reaches 28.4 BLEU [1]. Everyone agrees. It is fast [3]."
    read = answer(text, cite(1, "p1::c0001"), cite(3, "gone::c0001"), sufficient=True)
    verified, verdicts = verify_answer(read, CHUNKS.get, judge)
    assert [v["reason"] for v in verdicts] == ["entailed", "cites no chunk", "its cited chunks are not in the corpus"]
    assert len(judge.pairs) == 1 and verified.text == "The Transformer reaches 28.4 BLEU [1]."
    assert [c.number for c in verified.citations] == [1]


def test_claims_citing_two_chunks_are_judged_against_both_texts() -> None:
    judge = ScriptedJudge()
    both = answer("Both hold [1, 2].", cite(1, "p1::c0001"), cite(2, "p2::c0001"), sufficient=True)
    verify_answer(both, CHUNKS.get, judge, min_overlap=0.0)  # the word check off: the judge sees it
    assert judge.pairs == [(f"{CHUNKS['p1::c0001']}\n\n{CHUNKS['p2::c0001']}", "Both hold.")]


def test_abstaining_answers_are_returned_unverified() -> None:
    read = answer(ABSTENTION, sufficient=False)
    assert verify_answer(read, CHUNKS.get, ScriptedJudge()) == (read, [])
    assert read.supported_fraction is None
    with pytest.raises(ValueError, match="remove"):
        verify_answer(LLM_ANSWER, CHUNKS.get, ScriptedJudge(), "delete")  # type: ignore[arg-type]


# ---------------------------------------------------------------- settings and factory


def test_grounding_settings_from_the_environment_and_not_in_the_index_key(monkeypatch, tmp_path) -> None:
    from lit3r.settings import load_settings

    assert all(f.description for f in GroundingSettings.model_fields.values())
    base = Settings(home=tmp_path)
    assert (base.grounding.verify, base.grounding.judge, base.grounding.unsupported) == (True, "auto", "remove")
    monkeypatch.setenv("LIT3R_GROUNDING__JUDGE", "llm")
    monkeypatch.setenv("LIT3R_GROUNDING__UNSUPPORTED", "mark")
    monkeypatch.setenv("LIT3R_GROUNDING__THRESHOLD", "0.7")
    loaded = load_settings(home=tmp_path)
    assert (loaded.grounding.judge, loaded.grounding.unsupported, loaded.grounding.threshold) == ("llm", "mark", 0.7)
    assert index_key(loaded) == index_key(base)


def test_auto_judge_is_nli_when_a_model_is_named_else_llm_with_a_chat_model_else_exact() -> None:
    auto = GroundingSettings()
    assert judge_kind(auto, has_llm=False) == "exact" and judge_kind(auto, has_llm=True) == "llm"
    assert judge_kind(GroundingSettings(nli_model="some/nli"), has_llm=True) == "nli"
    assert judge_kind(GroundingSettings(judge="exact"), has_llm=True) == "exact"
    assert isinstance(make_judge(auto), ExactJudge)
    with pytest.raises(ValueError, match="chat model"):
        make_judge(GroundingSettings(judge="llm"))
    with pytest.raises(ValueError, match="nli_model"):
        make_judge(GroundingSettings(judge="nli"))
