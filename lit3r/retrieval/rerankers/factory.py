"""Build a reranker from a short spec string (settings, CLI flags, presets)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lit3r.retrieval.rerankers import Reranker

if TYPE_CHECKING:
    from lit3r.index.corpus_index import CorpusIndex
    from lit3r.llm.wrapper import LLM

SPECS = (
    "none",
    "bi-encoder",
    "maxsim-minilm",
    "lexical",
    "cross-encoder:<path or name>",
    "colbert:<path or name>",
    "llm",
)


def _model_of(spec: str, prefix: str) -> str:
    model = spec[len(prefix) :].strip()
    if not model:
        raise ValueError(f"reranker spec {spec!r} names no model: use '{prefix}<path or hub name>'")
    return model


def needs_llm(spec: str) -> bool:
    """Whether the reranker ``spec`` names calls a chat model (then it is built per run, on the run's LLM)."""
    return spec.strip() == "llm"


def load_reranker(spec: str, *, llm: LLM | None = None, **kwargs: Any) -> Reranker | None:
    """The reranker ``spec`` names; ``None`` for 'none' (retrieval keeps its own order).

    Specs: 'none', 'bi-encoder', 'maxsim-minilm', 'lexical', 'cross-encoder:<path or name>',
    'colbert:<path or name>', 'llm' (judges with ``llm``, the wrapped chat model). Keyword arguments go to the
    reranker's constructor. Model weights load on the first score, not here.

    Raises:
        ValueError: unknown spec, a model spec without a model, or 'llm' without ``llm``.
    """
    spec = spec.strip()
    if spec == "none":
        return None
    if spec == "bi-encoder":
        from lit3r.retrieval.rerankers.offline import BiEncoderReranker

        return BiEncoderReranker(**kwargs)
    if spec == "maxsim-minilm":
        from lit3r.retrieval.rerankers.offline import minilm_maxsim_reranker

        return minilm_maxsim_reranker(**kwargs)
    if spec == "lexical":
        from lit3r.retrieval.rerankers.offline import LexicalReranker

        return LexicalReranker(**kwargs)
    if spec.startswith("cross-encoder:"):
        from lit3r.retrieval.rerankers.cross_encoder import CrossEncoderReranker

        return CrossEncoderReranker(_model_of(spec, "cross-encoder:"), **kwargs)
    if spec.startswith("colbert:"):
        from lit3r.retrieval.rerankers.colbert import ColbertReranker

        return ColbertReranker(_model_of(spec, "colbert:"), **kwargs)
    if spec == "llm":
        from lit3r.retrieval.rerankers.llm import LLMPointwiseReranker

        if llm is None:
            raise ValueError("reranker 'llm' needs a chat model: set llm.provider (and llm.base_url or a key)")
        return LLMPointwiseReranker(llm, **kwargs)
    raise ValueError(f"unknown reranker spec {spec!r}; expected one of: {', '.join(SPECS)}")


def reranker_for_index(spec: str, index: CorpusIndex, *, llm: LLM | None = None, **kwargs: Any) -> Reranker | None:
    """The reranker ``spec`` names, bound to ``index`` where that saves work.

    'bi-encoder' uses the index's own chunk encoder and looks passage vectors up in its dense index; 'llm'
    judges with ``llm``.
    """
    if spec.strip() == "bi-encoder":
        from lit3r.retrieval.rerankers.offline import BiEncoderReranker

        return BiEncoderReranker.from_index(index)
    return load_reranker(spec, llm=llm, **kwargs)
