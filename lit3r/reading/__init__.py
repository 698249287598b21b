"""Reading: turn evidence chunks into a cited answer.

* :func:`extractive_answer` (:mod:`~lit3r.reading.extractive`): the offline default reader, no language model,
  verbatim quotes only (yes/no questions answered "Yes"/"No" with the quoted words that decide it); its parts are
  :mod:`~lit3r.reading.scoring`, :mod:`~lit3r.reading.quotes`, :mod:`~lit3r.reading.spans`,
  :mod:`~lit3r.reading.polarity` and :mod:`~lit3r.reading.forms`.
* :class:`~lit3r.reading.llm_reader.LLMReader` (the two-stage Lit3R reader) and
  :class:`~lit3r.reading.compact_reader.CompactReader` (one call over numbered passages,
  :mod:`~lit3r.reading.passages`, for small local models).

What an answer must look like, and the checks and repair every reader's output goes through, are in
:mod:`lit3r.answers`.
"""

from lit3r.reading.extractive import Scorer, extractive_answer
from lit3r.reading.scoring import lexical_scores

__all__ = ["Scorer", "extractive_answer", "lexical_scores"]
