"""The claim verdict: supported, negated, hedged, renumbered and unaddressed claims, the LLM verdict's quote checks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from lit3r.grounding.stance import OfflineStance, Passage, load_model, sentence_spans
from lit3r.grounding.stance_llm import LLMStance, standing_quote
from lit3r.llm.trace import TraceRecorder
from lit3r.llm.wrapper import LLM
from lit3r.settings.llm import LLMSettings

from fakes.openai_server import OpenAIServer, reply

RESULTS = Passage(
    "p1::c0002",
    "We trained the model on the full corpus. Evidence verification reduced the share of answers with unsupported "
    "claims from 18% to 6% on the test set. Training took two days on one machine.",
)
HEDGED = Passage(
    "p2::c0001",
    "We ran a small pilot. Evidence verification may reduce the share of answers with unsupported claims, "
    "but the sample was small.",
)
CLAIM = "Evidence verification reduces the share of answers with unsupported claims."


@pytest.fixture(scope="module")
def judge() -> OfflineStance:
    return OfflineStance()


def test_a_restated_finding_supports_the_claim_with_its_sentence_quoted(judge) -> None:
    verdict = judge.judge(CLAIM, [RESULTS])
    assert verdict.verdict == "supports" and verdict.confidence > 0.5
    assert [q.quote for q in verdict.quotes][0].startswith("Evidence verification reduced the share")
    assert all(q.quote in RESULTS.text and q.role == "supports" for q in verdict.quotes)


def test_a_negated_claim_is_contradicted(judge) -> None:
    verdict = judge.judge(
        "Evidence verification does not reduce the share of answers with unsupported claims.", [RESULTS]
    )
    assert verdict.verdict == "contradicts"
    assert verdict.quotes and verdict.quotes[0].role == "contradicts" and verdict.quotes[0].quote in RESULTS.text


def test_the_opposite_direction_is_contradicted(judge) -> None:
    verdict = judge.judge("Evidence verification increases the share of answers with unsupported claims.", [RESULTS])
    assert verdict.verdict == "contradicts"


def test_a_negation_flips_the_direction_word_it_governs_and_inflections_count() -> None:
    from lit3r.grounding.stance_features import Text

    assert Text.of("Verification reduces errors.").polarity == -1
    assert Text.of("Verification does not reduce errors.").polarity == 1  # denies the decrease
    assert Text.of("Verification brought no increase in errors.").polarity == -1
    assert Text.of("Mice lacking the gene showed reduced growth.").polarity == -1  # the negation is elsewhere
    assert Text.of("Reranking lowers recall.").polarity == -1 and Text.of("Recall rises.").polarity == 1
    assert Text.of("Reranking lowered recall.").polarity == -1 and Text.of("It is lowering it.").polarity == -1


def test_superlatives_speed_words_and_graded_comparatives_assert_a_direction() -> None:
    from lit3r.grounding.stance_features import Text

    assert Text.of("It is the slowest component.").polarity == -1 and Text.of("It is the fastest.").polarity == 1
    assert Text.of("It reaches the highest recall.").polarity == 1 and Text.of("The lowest cost.").polarity == -1
    assert Text.of("It encodes passages more slowly.").polarity == -1  # "more" grades "slowly", not "more" of it
    assert Text.of("The drug is less harmful.").polarity == 1 and Text.of("It is more effective.").polarity == 1
    assert Text.of("Hard negatives help.").polarity == 0 and Text.of("False positives rose.").polarity == 1  # nouns


def test_a_sentences_direction_is_read_where_it_speaks_of_what_the_claims_direction_is_about() -> None:
    from lit3r.grounding.stance_features import FEATURES, Text, anchored_polarity, pair_features

    claim = Text.of("The small encoder encodes passages more slowly than the large encoder.")
    sentence = Text.of(
        "Trained on fewer and smaller batches, the small encoder reaches 0.55 against 0.57 for an encoder fifteen "
        "times larger, while encoding passages eight times faster."
    )
    assert sentence.polarity == 0  # "fewer", "smaller" and "larger" drown "faster" in the sentence as a whole
    assert anchored_polarity(claim, sentence) == 1  # "faster" is said of encoding passages
    features = dict(zip(FEATURES, pair_features(claim, sentence, sentence.stems, sentence.numbers), strict=True))
    assert features["direction_conflict"] == 1.0 and features["direction_agree"] == 0.0
    elsewhere = Text.of("The large encoder is slower to train. Encoding passages takes six minutes.")
    assert anchored_polarity(claim, elsewhere) == -1  # nothing anchored: the sentence's own direction


def test_a_negative_prefix_denies_the_word_it_opens_and_only_that(judge) -> None:
    from lit3r.grounding.stance_features import Text, denies

    finding = Passage(
        "p4::c0001", "We vary k from 1 to 100. Reciprocal rank fusion is insensitive to k over this range."
    )
    assert judge.judge("Reciprocal rank fusion is sensitive to k.", [finding]).verdict == "contradicts"
    assert judge.judge("Reciprocal rank fusion is insensitive to k.", [finding]).verdict == "supports"
    assert denies(Text.of("The effect was significant."), Text.of("The effect was non-significant."))
    assert denies(Text.of("The feature is irrelevant."), Text.of("The feature is relevant."))
    assert not denies(Text.of("Dropout increases recall."), Text.of("Dropout creases recall."))  # too short to read
    assert not denies(Text.of("The model informs the ranking."), Text.of("The form of the ranking."))


def test_an_agreement_coefficients_value_states_high_or_low_agreement() -> None:
    from lit3r.grounding.stance_features import Text

    assert Text.of("Agreement reached a Cohen's kappa of 0.81.").polarity == 1  # substantial or better
    assert Text.of("Inter-annotator agreement reached Krippendorff's alpha 0.32.").polarity == -1  # fair or worse
    assert Text.of("Agreement reached a kappa of 0.52.").polarity == 0  # moderate: neither
    assert Text.of("We report 0.81 recall at 10 for alpha tuning runs.").polarity == 0  # not a coefficient's value


DEMO = Path(__file__).resolve().parents[2] / "lit3r" / "demo" / "papers"


def demo_chunks(name: str) -> list[Passage]:
    """A demo paper's chunks as ingesting makes them, as passages (a check is given a paper's retrieved chunks)."""
    from lit3r.corpus.chunkers import chunk_paper
    from lit3r.corpus.parsers.markdown import parse_markdown
    from lit3r.settings import ChunkerSettings

    return [Passage(c.id, c.text) for c in chunk_paper(parse_markdown(DEMO / f"{name}.md")[0], ChunkerSettings())]


@pytest.mark.parametrize(
    ("claim", "paper", "verdict"),
    [
        ("Reranking with a cross-encoder does not improve recall at 10.", "demo-cross-encoder-rerank", "contradicts"),
        ("Reranking with a cross-encoder raises recall at 10.", "demo-cross-encoder-rerank", "supports"),
        ("Adding the section-title field to BM25 does not improve recall.", "demo-sparse-retrieval", "contradicts"),
        ("Adding the section-title field to BM25 improves recall.", "demo-sparse-retrieval", "supports"),
        # a sentence on the topic that states no change does not make these mixed; "without further rounds,
        # halves the rate" is not a denial of "halves the rate"
        ("Verification halves the rate of unsupported claims.", "demo-evidence-verification", "supports"),
        ("Verification doubles the rate of unsupported claims.", "demo-evidence-verification", "contradicts"),
        # "needs no tuning of weights" negates the tuning, not the recall the claim restates
        (
            "Reciprocal rank fusion with k = 60 reaches a paper-level recall at 10 of 0.63 on LocatorQA.",
            "demo-rank-fusion",
            "supports",
        ),
        (
            "Evidence verification does not reduce the share of answers with unsupported claims.",
            "demo-evidence-verification",
            "contradicts",
        ),
        # the paper: "... while encoding passages eight times faster on a CPU" beside "fifteen times larger"
        (
            "The small encoder encodes passages more slowly than the large encoder.",
            "demo-dense-small-encoders",
            "contradicts",
        ),
        # the paper restates the claim with 0.55: its table's caption, touching the claim, does not make it mixed
        (
            "The small encoder reaches a paper-level recall at 10 of 0.75 on LocatorQA.",
            "demo-dense-small-encoders",
            "contradicts",
        ),
        # the paper: "... and is insensitive to k over a wide range"
        ("Reciprocal rank fusion is sensitive to k.", "demo-rank-fusion", "contradicts"),
        # the paper: "Agreement on evidence passages reached a Cohen's kappa of 0.81"
        ("Annotator agreement on evidence passages was low.", "demo-benchmark", "contradicts"),
        ("Annotator agreement on evidence passages was high.", "demo-benchmark", "supports"),
        # the paper's Table 1: accuracy 0.61 without verification, 0.62 and 0.64 with it
        ("The verification step decreases answer accuracy.", "demo-evidence-verification", "contradicts"),
        ("The verification step increases answer accuracy.", "demo-evidence-verification", "supports"),
        # the paper: "hard negatives help every encoder size" ("negatives" names examples, not a decrease)
        ("Hard negatives do not help the small encoder.", "demo-dense-small-encoders", "contradicts"),
        # the paper: "remains the fastest component of a hybrid pipeline"
        (
            "The tuned sparse system is the slowest component of a hybrid pipeline.",
            "demo-sparse-retrieval",
            "contradicts",
        ),
    ],
)
def test_negated_claims_about_a_demo_paper_are_contradicted_and_the_plain_ones_supported(
    judge, claim, paper, verdict
) -> None:
    passages = demo_chunks(paper)
    found = judge.judge(claim, passages)
    assert found.verdict == verdict, found.reason
    assert found.quotes and all(any(q.quote in p.text for p in passages) for q in found.quotes)


def test_a_number_that_differs_from_the_papers_is_contradicted(judge) -> None:
    claim = "Evidence verification reduced the share of answers with unsupported claims from 18% to 2%."
    assert judge.judge(claim, [RESULTS]).verdict == "contradicts"
    same = "Evidence verification reduced the share of answers with unsupported claims from 18% to 6%."
    assert judge.judge(same, [RESULTS]).verdict == "supports"


def test_a_paper_reporting_other_measurements_in_the_claims_place_contradicts_it(judge) -> None:
    # The shared PaSa paper's two sentences: one puts 37.78% after "by" where the claim puts 12%, the other
    # reports another improvement; neither states 12, so the paper contradicts the claim (it was "mixed").
    passages = [
        Passage(
            "pasa::c0001",
            "In particular, PaSa-7B surpasses Google with GPT-4o by 37.78% in recall@20 and 39.90% in recall@50, "
            "while also exceeding PaSa-GPT-4o by 30.36% in recall and 4.25% in precision.",
        ),
        Passage(
            "pasa::c0002",
            "Specifically, for AutoScholarQuery test set, PaSa-7b achieves a 34.05% improvement in Recall@20 and a "
            "39.36% improvement in Recall@50 compared to Google with GPT-4o, the strongest Google-based baseline.",
        ),
    ]
    verdict = judge.judge("PaSa-7B surpasses Google with GPT-4o by 12% in recall@20.", passages)
    assert verdict.verdict == "contradicts" and {q.role for q in verdict.quotes} == {"contradicts"}
    stated = judge.judge("PaSa-7B surpasses Google with GPT-4o by 37.78% in recall@20.", passages)
    assert stated.verdict == "supports"  # the paper's own number: not renumbered
    # a percentage is not the cut-off of "recall@50" the paper states: 50% is a number the paper never gives
    fifty = judge.judge("PaSa-7B surpasses Google with GPT-4o by 50% in recall@50.", passages)
    assert fifty.verdict == "contradicts"


def test_a_percentage_and_a_metric_cut_off_are_not_the_same_number() -> None:
    from lit3r.grounding.lexicon import numbers

    assert numbers("by 50% in recall@50") == {"50%"}  # "@50" names the metric, "50%" is the value
    assert numbers("from 18% to 6.50% of 1,000 answers, top 50") == {"18%", "6.5%", "1000", "50"}


def test_hedged_evidence_supports_with_less_confidence(judge) -> None:
    firm = judge.judge(CLAIM, [RESULTS])
    hedged = judge.judge(CLAIM, [HEDGED])
    assert hedged.verdict == "supports" and hedged.confidence < firm.confidence
    may = judge.judge("Evidence verification may reduce the share of answers with unsupported claims.", [RESULTS])
    assert may.verdict == "supports"


def test_an_unrelated_paper_does_not_address_the_claim(judge) -> None:
    verdict = judge.judge("Penguins migrate north in winter to breed on sea ice.", [RESULTS])
    assert verdict.verdict == "not_addressed" and verdict.quotes == []


def test_sentences_are_verbatim_spans_and_the_shipped_model_records_its_training() -> None:
    text = RESULTS.text
    assert [text[s:e] for s, e in sentence_spans(text)][1].endswith("on the test set.")
    model = load_model()
    assert model.trained_on["scifact_claims"] == 208 and model.trained_on["cv_stance_accuracy"] > 0.659
    with pytest.raises(ValueError, match="not a stance model"):
        load_model(__file__)


def test_a_quote_stands_only_when_its_chunk_holds_it() -> None:
    assert standing_quote("evidence verification REDUCED the share", RESULTS.text).startswith("Evidence verification")
    assert standing_quote("Verification doubled accuracy on every benchmark.", RESULTS.text) is None


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    for variable in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(variable, "127.0.0.1,localhost")
    with OpenAIServer() as running:
        yield running


def http_llm(server: OpenAIServer) -> tuple[LLM, TraceRecorder]:
    settings = LLMSettings(
        provider="openai", base_url=server.base_url, api_key="sk-test", model="fake-model", timeout_s=2.0,
        max_attempts=1, max_tokens=256,
    )  # fmt: skip
    recorder = TraceRecorder()
    return LLM.from_settings(settings, recorder=recorder), recorder


def test_the_llm_verdict_keeps_quotes_that_stand_and_falls_back_when_none_do(server) -> None:
    good = {"verdict": "contradicts", "confidence": 0.9, "quotes": [
        {"passage": 1, "quote": "Evidence verification reduced the share of answers with unsupported claims from "
         "18% to 6% on the test set.", "role": "contradicts"},
        {"passage": 1, "quote": "Verification made everything perfect.", "role": "contradicts"},
    ]}  # fmt: skip
    invented = {
        "verdict": "supports",
        "confidence": 0.8,
        "quotes": [{"passage": 1, "quote": "Made up.", "role": "supports"}],
    }
    server.add(reply(json.dumps(good)), reply(json.dumps(invented)))
    llm, recorder = http_llm(server)
    stance = LLMStance(llm)
    claim = "Evidence verification raises the share of answers with unsupported claims."
    verdict = stance.judge(claim, [RESULTS])
    assert verdict.verdict == "contradicts" and verdict.by == "llm" and verdict.confidence == 0.9
    assert [q.quote for q in verdict.quotes] == [
        RESULTS.text[RESULTS.text.index("Evidence") : RESULTS.text.index(" Training")]
    ]
    prompt = server.requests[0]["body"]["messages"][-1]["content"]
    assert server.requests[0]["body"]["response_format"]["type"] == "json_schema"  # structured output
    assert "<claim>" in prompt and 'passage="1"' in prompt and "18% to 6%" in prompt
    fallback = stance.judge(CLAIM, [RESULTS])
    assert fallback.by == "offline" and "no quote standing" in fallback.reason and fallback.verdict == "supports"
    assert [e.name for e in recorder.of_type("llm")] == ["check.stance", "check.stance"]


def test_the_gold_setting_with_a_judge_scores_each_claim_against_its_abstract() -> None:
    from lit3r.evals.scifact import gold_setting_with
    from lit3r.evals.stance_data import LabelledClaim
    from lit3r.grounding.stance import PaperVerdict

    class Says:
        def __init__(self, verdict: str) -> None:
            self.verdict = verdict

        def judge(self, claim, passages):
            assert [p.chunk_id for p in passages] == ["p1"] and passages[0].text == "The abstract."
            return PaperVerdict(verdict=self.verdict, confidence=0.9)

    claims = [LabelledClaim(claim="X helps.", paper_id="p1", title="T", text="The abstract.", supports=True)] * 3
    report = gold_setting_with(lambda claim: Says("supports"), claims)
    assert report["accuracy"] == 1.0 and report["verdicts"] == {"supports": 3} and report["claims"] == 3
    assert report["by_llm"] == {"claims": 0, "right": 0}  # the fake's verdicts say "offline"
    assert gold_setting_with(lambda claim: Says("contradicts"), claims)["accuracy"] == 0.0


def test_an_llm_verdicts_fallback_in_the_gold_setting_is_the_held_out_offline_one() -> None:
    """A claim the LLM leaves undecided is judged by the offline model fitted without its paper, as the offline
    figure is, not by the packaged model trained on every claim of the file."""
    from lit3r.evals.scifact import gold_setting, held_out_judges, load, predicted_true
    from lit3r.evals.stance_training import Examples, paper_fold

    from conftest import shared

    claims = load(shared("scholarqabench", "scifact_test.jsonl"))
    held = held_out_judges(claims)
    assert len({id(judge) for judge in held.values()}) == 5  # one model per fold
    # the judge of a paper is the model fitted on the other folds, not one that saw the paper
    examples = Examples(claims, [])
    fold = paper_fold(claims[0].paper_id, 5)
    train = [paper_fold(c.paper_id, 5) != fold for c in claims]
    rel_train = [paper_fold(c.paper_id, 5) != fold for c in examples.rel_claims]
    assert held[claims[0].paper_id].model.stance.coef == examples.fit(np.array(train), np.array(rel_train)).stance.coef
    assert held[claims[0].paper_id].model.stance.coef != examples.fit().stance.coef
    right = [
        predicted_true(held[c.paper_id].judge(c.claim, [Passage(c.paper_id, c.text)])) == c.supports for c in claims
    ]
    report = gold_setting(claims, judges=held)
    assert right == report["right"]
    assert report["packaged_model_in_sample_accuracy"] > report["accuracy"]  # why in-sample fallbacks mislead


def test_the_llm_verdict_is_reported_beside_the_offline_one_on_the_same_claims() -> None:
    from lit3r.evals.scifact import beside_offline

    offline = {"right": [True, False, True, True, False, False, True]}  # held out, every claim
    judged = {"rows": [{"right": r} for r in (True, False, False, True)]}  # every 2nd claim: 0, 2, 4, 6
    assert beside_offline(offline, judged, 2) == {  # offline there: right, right, wrong, right
        "accuracy": 0.75, "both_right": 2, "only_llm_right": 0, "only_offline_right": 1, "neither": 1,
    }  # fmt: skip
    with pytest.raises(ValueError, match="one in 3 of the offline run is 3"):
        beside_offline(offline, judged, 3)
    from_second = {"rows": [{"right": r} for r in (True, True, False)]}  # every 2nd from claim 1: 1, 3, 5
    assert beside_offline(offline, from_second, 2, offset=1) == {  # offline there: wrong, right, wrong
        "accuracy": 0.3333, "both_right": 1, "only_llm_right": 1, "only_offline_right": 0, "neither": 1,
    }  # fmt: skip


def test_the_checks_llm_judge_records_its_calls_in_the_checks_trace() -> None:
    from types import SimpleNamespace

    from lit3r.app.check import stance_judge

    from fakes.chat import FakeToolCallingModel

    good = {"verdict": "supports", "confidence": 0.8, "quotes": [{"passage": 1, "quote": RESULTS.text[41:140]}]}
    session = SimpleNamespace(
        chat_model=FakeToolCallingModel(script=[json.dumps(good)] * 3),
        settings=SimpleNamespace(llm=LLMSettings(provider="openai", model="fake")),
    )
    recorder = TraceRecorder()
    verdict = stance_judge(session, recorder).judge(CLAIM, [RESULTS])  # an LLM call recorded, not a crash
    assert verdict.verdict in ("supports", "contradicts", "mixed", "not_addressed")
    assert recorder.of_type("llm") and {e.name for e in recorder.of_type("llm")} <= {
        "check.stance",
        "check.stance.repair",
    }


def test_the_checks_llm_judge_falls_back_to_the_judge_it_is_given() -> None:
    from types import SimpleNamespace

    from lit3r.app.check import stance_judge

    from fakes.chat import FakeToolCallingModel

    held_out = OfflineStance()
    session = SimpleNamespace(
        chat_model=FakeToolCallingModel(script=[]), settings=SimpleNamespace(llm=LLMSettings(provider="openai"))
    )
    assert stance_judge(session, TraceRecorder(), fallback=held_out).fallback is held_out
    assert stance_judge(SimpleNamespace(chat_model=None), TraceRecorder(), fallback=held_out) is held_out


def test_a_claim_relating_two_directions_is_judged_by_how_they_move_together() -> None:
    from lit3r.grounding.directions import covariation
    from lit3r.grounding.stance_features import Text

    claim = Text.of("Reranking latency falls as the candidate budget grows.")
    assert claim.polarity == 0 and covariation(claim.tokens, claim.signs) == -1  # "falls" and "grows" do not cancel
    same = Text.of("Latency doubles when the budget doubles.")
    assert covariation(same.tokens, same.signs) == 1
    plain = Text.of("Latency grows and recall falls.")
    assert covariation(plain.tokens, plain.signs) == 0  # two findings, not a relation
    judge = OfflineStance()
    stated = "Reranking latency {} as the candidate budget grows."
    verdicts = {w: judge.judge(claim.raw, [Passage("p::c0001", stated.format(w))]).verdict for w in ("rises", "falls")}
    assert verdicts == {"rises": "contradicts", "falls": "supports"}


def test_a_comparison_with_its_sides_swapped_contradicts_the_claim() -> None:
    from lit3r.grounding.stance_features import Text, swapped

    claim = Text.of("Co-citation helps more than bibliographic coupling.")
    assert swapped(claim, Text.of("Bibliographic coupling helps more than co-citation."))
    assert not swapped(claim, Text.of("Co-citation helps more than bibliographic coupling on old papers."))
    assert not swapped(claim, Text.of("Bibliographic coupling and co-citation both help."))  # no comparison
    judge = OfflineStance()
    paper = "We compare the two signals. Bibliographic coupling helps more than co-citation on recent work."
    assert judge.judge(claim.raw, [Passage("p::c0001", paper)]).verdict == "contradicts"
    assert judge.judge("Bibliographic coupling helps more than co-citation.", [Passage("p::c0001", paper)]).verdict == (
        "supports"
    )
    # the other way round and the opposite comparative: the same finding
    worse = "Co-citation helps less than bibliographic coupling."
    assert judge.judge(worse, [Passage("p::c0001", paper)]).verdict == "supports"
    beats = Text.of("The dense encoder beats BM25 by six points.")
    assert swapped(Text.of("BM25 outperforms the dense encoder."), beats)


def test_a_comparison_stated_with_compared_to_has_its_sides_read_too() -> None:
    from lit3r.grounding.directions import compared_sides
    from lit3r.grounding.stance_features import Text, swapped

    sentence = (
        "Specifically, compared to the strongest baseline, PaSa-GPT-4o, PaSa-7b demonstrates a 9.64% improvement in "
        "recall with comparable precision."
    )
    text = Text.of(sentence)
    left, right = compared_sides(text.tokens, text.raw)
    assert right == {"strongest", "baseline", "pasa-gpt-4o"} and {"pasa-7b", "recall"} <= left  # the apposition too
    assert swapped(Text.of("PaSa-GPT-4o outperforms PaSa-7B in recall."), text)
    assert not swapped(Text.of("PaSa-7B outperforms PaSa-GPT-4o in recall."), text)
    assert Text.of("PaSa-7B outperforms PaSa-GPT-4o.").polarity == 1  # "outperforms" asserts "more"
    above = Text.of("Fusion is the best method, eight points above the dense encoder and five above interpolation.")
    assert swapped(Text.of("Interpolation outperforms fusion."), above)  # every pivot's side: encoder, interpolation
    assert not swapped(Text.of("Fusion outperforms interpolation."), above)
    judge = OfflineStance()
    passage = [Passage("pasa::c0001", sentence)]
    assert judge.judge("PaSa-GPT-4o outperforms PaSa-7B in recall.", passage).verdict == "contradicts"
    assert judge.judge("PaSa-7B outperforms PaSa-GPT-4o in recall.", passage).verdict == "supports"
