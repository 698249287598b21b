"""What every tool call of a run works with: the index, settings, rerankers and readers, and the trace recorder.

A :class:`ToolContext` is built once per run (by the application, :mod:`lit3r.app.session`) from pieces a
session shares across runs (index, reranker, gate) and pieces of the run itself (the trace recorder, readers
and judges bound to the run's model wrapper). The tools never change it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lit3r.grounding.judge import Judge
from lit3r.index.corpus_index import CorpusIndex
from lit3r.llm.trace import TraceRecorder
from lit3r.reading.reader import ExtractiveReader, Reader
from lit3r.retrieval.gate import GateThreshold
from lit3r.retrieval.planning import HydeWriter, Verifier
from lit3r.retrieval.rerankers import Reranker
from lit3r.settings import Settings


@dataclass(frozen=True)
class ToolContext:
    """Everything the six tools need besides the graph state.

    Attributes:
        index: The corpus index the tools search.
        settings: All settings; ``settings.retriever`` drives retrieval and verification, ``settings.grounding``
            what claim verification does with unsupported sentences.
        verifier: Judges whether the pool suffices (offline: the gate verifier).
        reader: Answers from the final papers' chunks (:class:`~lit3r.reading.reader.Reader`; offline: the
            extractive reader).
        reranker: Chunk reranker (None: retrieval order only).
        gate: Calibrated relevance-gate threshold (None: uncalibrated, every question is read).
        hyde: Writes HyDE passages for short queries (None: the query itself is the dense query).
        judge: Checks each sentence of an answer against the chunks it cites (None: answers are not verified).
        recorder: The run's trace.
    """

    index: CorpusIndex
    settings: Settings
    verifier: Verifier
    reader: Reader = field(default_factory=ExtractiveReader)
    reranker: Reranker | None = None
    gate: GateThreshold | None = None
    hyde: HydeWriter | None = None
    judge: Judge | None = None
    recorder: TraceRecorder = field(default_factory=TraceRecorder)
