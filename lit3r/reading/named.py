"""A question asking which named things (datasets, corpora, benchmarks, baselines, models, tools, metrics) is
answered with the stretch of its sentence that names them.

"What datasets do they use?", "What are the baselines?", "Which model performs best?" ask for names, as "how many"
asks for a number and "which languages" for language names (:mod:`lit3r.reading.languages`). The offline reader
chooses the sentence as for any question; the answer quotes the stretch of it from its first name to its last
("the Yelp Challenge dataset BIBREF2 and the Amazon reviews of BIBREF3" -> "Yelp Challenge dataset BIBREF2 and the
Amazon"), and the citation the whole sentence. A **name** is spelt as one, as English and the field write names: a
capital after its first letter ("BERT", "SQuAD", "GPT-2", "fastText"), or a capital opening a word that does not
open the sentence ("Yelp", "Transformer"); a citation placeholder ("BIBREF2") is none. A sentence naming nothing is
quoted whole.
"""

from __future__ import annotations

import re

from lit3r.answers.sentences import Span

_ASKS = re.compile(
    r"\b(?:what|which)\b[^?]*?\b(?:datasets?|data\s+sets?|corpora|corpus|benchmarks?|baselines?|models?|toolkits?"
    r"|tools?|metrics?)\b",
    re.IGNORECASE,
)
_TOKEN = re.compile(r"[A-Za-z0-9][\w\-.@]*\w|[A-Za-z0-9]")
_PLACEHOLDER = re.compile(r"(?:BIBREF|FIGREF|TABREF|SECREF|INLINEFORM|DISPLAYFORM|EQREF)\d*")


def asks_names(question: str) -> bool:
    """Whether ``question`` asks which datasets, corpora, benchmarks, baselines, models, tools or metrics."""
    return bool(_ASKS.search(question))


def _named(token: str, opens: bool, given: set[str]) -> bool:
    if _PLACEHOLDER.fullmatch(token) or token.lower() in given or re.split(r"[-.@]", token)[0].lower() in given:
        return False
    return any(ch.isupper() for ch in token[1:]) or (token[0].isupper() and not opens)


def names_stretch(text: str, sentence: Span, question: str = "") -> Span | None:
    """The stretch of ``text[sentence]`` from its first name to its last (see the module docstring), the names the
    ``question`` gives left out (they say what it asks about, not the answer: "Which datasets are used to evaluate
    PaSa?" is not answered by "PaSa", nor by "PaSa-7b"); ``None`` when it names nothing else or the stretch is the
    whole sentence."""
    given = {w.lower() for w in _TOKEN.findall(question)}
    found = [
        (m.start(), m.end()) for i, m in enumerate(_TOKEN.finditer(text, *sentence)) if _named(m.group(), i == 0, given)
    ]
    if not found:
        return None
    start, end = found[0][0], found[-1][1]
    inside = text[start:end]
    if inside.count("(") > inside.count(")") and (close := text.find(")", end, sentence[1])) >= 0:
        end = close + 1  # "LSTM (BiLSTM" closes its bracket: "LSTM (BiLSTM)"
    if inside.count(")") > inside.count("(") and (opening := text.rfind("(", sentence[0], start)) >= 0:
        start = opening
    return None if (start, end) == sentence else (start, end)
