"""Retriever settings: every number of the Lit3R Retrieve and Relate steps (seed §2.1), described.

Defaults are the seed's. The ablation switches (``prf``, ``rerank``, ``relate``) turn one
stage off each, so its contribution can be measured.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

CandidateOrder = Literal["fused", "round_robin", "grouped"]
PrfWhen = Literal["always", "agree"]
Fusion = Literal["blend", "learned"]


class RetrieverSettings(BaseModel):
    """How the question-anchored retrieval (Ranking A) and the paper expansion (Ranking B) run."""

    model_config = ConfigDict(extra="forbid")

    # Retrieve: hybrid search and paper-level fusion.
    rrf_k: int = Field(default=60, ge=0, description="RRF constant for index fusion, PRF fusion and source fusion.")
    depth: int = Field(default=100, gt=0, description="Results taken from each index (chunk BM25, paper BM25, dense).")
    prf: bool = Field(default=True, description="Pseudo-relevance feedback: one expanded sweep per subquery.")
    prf_chars: int = Field(default=512, ge=0, description="Characters of the top paper's title-abstract appended.")
    prf_when: PrfWhen = Field(
        default="agree",
        description="When the PRF sweep runs: 'always' (seed), or 'agree': only when chunk BM25, paper BM25 and the "
        "dense index all rank the same paper first (the feedback paper is then likely relevant), and never within a "
        "single allowed paper, whose ranking PRF cannot change.",
    )
    prf_weight: float = Field(
        default=1.0, ge=0, description="RRF weight of the PRF sweep's paper ranking against 1 for the original."
    )
    prf_chunks: bool = Field(
        default=True,
        description="Whether the PRF sweep's chunk hits join the candidate chunks (seed: yes); off, PRF only "
        "reorders papers and the chunks come from the subquery's own hits.",
    )

    # Retrieve: chunk reranking.
    rerank: bool = Field(default=True, description="Score candidates with the reranker; off keeps retrieval order.")
    rerank_candidates: int = Field(default=200, gt=0, description="Chunks scored by the reranker per subquery.")
    candidate_order: CandidateOrder = Field(
        default="fused",
        description="How candidate chunks are ordered for reranking: 'fused' by RRF of each chunk's own fused rank "
        "and its paper's fused rank (chosen by measurement on QASPER, docs/BENCHMARKS.md); 'round_robin' takes each "
        "paper's best chunk (papers in fused order), then each paper's second best, ...; 'grouped' lists all "
        "chunks of the first paper, then of the second, ...",
    )
    fusion: Fusion = Field(
        default="learned",
        description="How a subquery's candidates are ordered for the pool: 'blend' (seed: the blended retrieval and "
        "reranker ranks, top retrieval chunks pinned) or 'learned' (a logistic model over the pipeline's signals, "
        "lit3r/retrieval/learned.py; pool scores are its probabilities, nothing pinned).",
    )
    fusion_model: str | None = Field(
        default=None, description="The learned fusion's model file (lit3r eval train-fusion); None: the packaged one."
    )
    pool_papers: int = Field(
        default=20,
        ge=0,
        description="Learned fusion: each of the first pool_papers papers of the fused ranking adds its most probable "
        "chunk to the pool share when none of the pool_per_subquery most probable chunks is from it.",
    )
    pinned: int = Field(default=20, ge=0, description="Top retrieval chunks pinned above all others.")
    pool_per_subquery: int = Field(default=20, ge=0, description="Chunks each subquery adds to the shared pool.")
    blend_k: int = Field(default=60, ge=0, description="k of the blend s = w_ret/(k+r_ret) + w_rr/(k+r_rr).")
    w_ret: float = Field(default=0.6, ge=0, description="Weight of the retrieval rank in the blend.")
    w_rr: float = Field(default=0.4, ge=0, description="Weight of the reranker rank in the blend.")
    pin_bonus: float = Field(default=1.0, gt=0, description="Added to pinned chunks' blend scores to keep them first.")

    # Retrieve: rounds, decomposition, verification, HyDE.
    max_rounds: int = Field(default=3, ge=1, description="Most retrieval rounds (decompose, retrieve, verify).")
    subqueries_first: int = Field(default=4, ge=1, description="Subqueries asked for in round 1.")
    subqueries_later: int = Field(default=4, ge=1, description="Most subqueries in each later round.")
    hyde_min_words: int = Field(
        default=10, ge=0, description="A subquery with fewer words gets a hypothetical passage as its dense query."
    )
    verify_papers: int = Field(default=20, ge=0, description="Top pool papers shown to the verifier.")
    verify_chunks_per_paper: int = Field(default=2, ge=0, description="Best pool chunks shown per verified paper.")
    verify_chunk_chars: int = Field(default=1800, ge=0, description="Characters each verified chunk is cut to.")

    # Relate: paper-to-paper expansion and A/B fusion.
    relate: bool = Field(default=True, description="Build Ranking B and fuse it with A; off: final = Ranking A.")
    relate_depth: int = Field(default=100, gt=0, description="Neighbours taken per seed from each source.")
    relate_seed_chars: int = Field(
        default=1200, gt=0, description="Characters of a seed's indexed text used as its paper-BM25 query."
    )
    coupling_min_shared: int = Field(default=2, ge=1, description="Shared references needed for coupling.")
    ranking_b_limit: int = Field(default=100, ge=0, description="Fused neighbours kept in Ranking B after the seeds.")
    ab_k: int = Field(default=10, ge=0, description="RRF constant of the A/B fusion.")
    final_papers: int = Field(default=50, ge=0, description="Papers of the final ranking passed to the reader.")
    reader_chunks: int = Field(
        default=5,
        ge=1,
        le=20,
        description="Best pooled chunks of each read paper given to the reader. The compact reader shows only a few "
        "short passages cut from them, so it can draw from more chunks than a reader that is shown them whole. 5: "
        "measured on QASPER with the offline reader (3, 4, 5, 7, 10 chunks: Answer F1 rises to 4-5 and is flat "
        "after; docs/BENCHMARKS.md), the seed's 3 leaving a paper's results paragraph out when its introduction "
        "and method match the question's words.",
    )
    reader_papers: int | None = Field(
        default=None,
        ge=1,
        description="Most papers (best first, among those with pooled chunks) whose chunks the reader reads; None: "
        "every final paper with pooled chunks. An LLM reader makes one stage-1 call per paper, so a slow local "
        "model wants few.",
    )

    @field_validator("fusion_model")
    @classmethod
    def _model_file_loads(cls, value: str | None) -> str | None:
        """A fusion model file must be readable JSON (the error names the file) before any question runs; its
        features and weights are checked when the retriever loads it (:func:`lit3r.retrieval.learned.load_model`)."""
        if value is not None:
            try:
                json.loads(Path(value).read_text(encoding="utf-8"))
            except OSError as exc:
                raise ValueError(f"{value}: cannot read the fusion model: {exc}") from exc
            except ValueError as exc:
                raise ValueError(f"{value}: the fusion model is not JSON: {exc}") from exc
        return value
