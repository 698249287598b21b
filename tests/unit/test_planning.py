"""The model-free planning pieces: keyword decomposition, the gate verifier, the one dedupe rule."""

from __future__ import annotations

from lit3r.retrieval.gate import GateThreshold
from lit3r.retrieval.planning import deterministic_subqueries, gate_verifier, new_subqueries


def test_deterministic_subqueries() -> None:
    assert deterministic_subqueries("How does BERT compare with ELMo on SQuAD?") == [
        "How does BERT compare with ELMo on SQuAD?",
        "BERT",
        "ELMo",
        "SQuAD",
    ]
    question = 'Which dataset is "Penn Treebank" style parsing evaluated on?'
    assert deterministic_subqueries(question) == [question, "Penn Treebank dataset style parsing evaluated"]
    question = "Which papers use bibliographic coupling for citation recommendation?"
    assert deterministic_subqueries(question) == [question, "bibliographic coupling citation recommendation"]
    assert deterministic_subqueries("GPT-4 and Llama on MMLU with chain prompting", limit=2) == [
        "GPT-4 and Llama on MMLU with chain prompting",
        "GPT-4 chain prompting",
    ]
    assert deterministic_subqueries("bm25") == ["bm25"]
    assert deterministic_subqueries("   ") == []


def test_gate_verifier_passes_iff_score_reaches_threshold() -> None:
    assert gate_verifier(0.5, 0.5).sufficient and not gate_verifier(0.49, 0.5).sufficient
    assert gate_verifier(None, None).sufficient  # uncalibrated gate
    missing = gate_verifier(None, GateThreshold.fixed(0.2))
    assert not missing.sufficient and "nothing was reranked" in missing.missing
    assert gate_verifier(0.9, 0.5).papers_with_evidence == []


def test_new_subqueries_drop_repeats_of_each_other_and_of_earlier_rounds() -> None:
    proposed = ["okapi  lexical", "Okapi lexical", "", "dense   encoder", "fusion", "speech"]
    assert new_subqueries(proposed, ["FUSION"], limit=5) == ["okapi lexical", "dense encoder", "speech"]
    assert new_subqueries(proposed, [], limit=1) == ["okapi lexical"]
    assert new_subqueries(["a"], [], limit=0) == []
