"""Reading: turn evidence chunks into a cited answer, and check any reader's answer against the corpus.

* :func:`extractive_answer`: the offline default reader, no language model, verbatim quotes only
  (yes/no questions answered "Yes"/"No" with the quoted words that decide it).
* :func:`validate_answer` / :func:`repair_citations`: the checks and the deterministic fallback
  every reader's output goes through.
"""

from lit3r.tools.reader.extractive import OPTION_SEPARATOR, Scorer, extractive_answer
from lit3r.tools.reader.scoring import lexical_scores
from lit3r.tools.reader.sentences import chunk_units, split_sentences
from lit3r.tools.reader.validate import (
    MARKER,
    ChunkLookup,
    insufficient_answer,
    repair_citations,
    validate_answer,
)

__all__ = [
    "MARKER",
    "OPTION_SEPARATOR",
    "ChunkLookup",
    "Scorer",
    "chunk_units",
    "extractive_answer",
    "insufficient_answer",
    "lexical_scores",
    "repair_citations",
    "split_sentences",
    "validate_answer",
]
