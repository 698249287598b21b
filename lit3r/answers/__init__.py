"""Answer text: what an answer must look like, whoever wrote it, and the checks grounding judges it by.

* :mod:`~lit3r.answers.validate`: citation markers ``[n]``, :func:`validate_answer` (what is wrong with an
  answer against the corpus), :func:`repair_citations` (the deterministic repair) and the abstaining answer.
* :mod:`~lit3r.answers.sentences`: the sentences and quotable units of a text (claims are sentences).
* :mod:`~lit3r.answers.question`: the form of answer a question asks for (yes/no, quantity, span, sentence),
  its implicit options and the separator between a chosen option and its sentence.

Nothing here reads evidence or calls a model: the readers (:mod:`lit3r.reading`) write answers,
:mod:`lit3r.grounding` judges them, and both import this package.
"""

from lit3r.answers.question import OPTION_SEPARATOR
from lit3r.answers.sentences import chunk_units, split_sentences
from lit3r.answers.validate import (
    MARKER,
    ChunkLookup,
    insufficient_answer,
    marker_numbers,
    repair_citations,
    validate_answer,
)

__all__ = [
    "MARKER",
    "OPTION_SEPARATOR",
    "ChunkLookup",
    "chunk_units",
    "insufficient_answer",
    "marker_numbers",
    "repair_citations",
    "split_sentences",
    "validate_answer",
]
