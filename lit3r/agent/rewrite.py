"""Chat follow-ups: a message is rewritten into a standalone question before the graph answers it.

A thread (:class:`lit3r.app.session.Thread`) sends each message through three steps:

1. **Rewrite** (this module). A follow-up becomes a standalone question (:func:`rewrite_followup`, one ``rewrite`` trace
   event). With a chat model, a structured-output call reads the last :data:`HISTORY_TURNS` turns (questions
   and answers, inside tags, as data) and writes the question; if the call fails, the offline rule applies.
   The offline rule (:func:`rule_rewrite`) never invents content. It first decides by the message's form
   (:func:`classify`) whether it is a follow-up:

   * it *refers back* (:data:`ANAPHORA`: 'it', 'its', 'they', 'them', 'their', 'this', 'these', 'those', 'the
     same', 'that paper', 'does that', a closing 'that?' and the like): a follow-up, whatever else it names;
   * otherwise it *names its own subject* and stands alone: a named term (an acronym, a mixed-case name, a code
     like GPT-4, a capitalised word after the first, a quoted phrase);
   * otherwise 'the paper', 'the method', 'the authors' and the like (:data:`DEFINITE`) refer back: a follow-up;
   * otherwise it stands alone with at least :data:`OWN_TERMS` key terms of its own, or
     :data:`ELLIPTIC_OWN_TERMS` when it has an elliptic form (:data:`ELLIPSIS`: opening with 'and', 'also',
     'what about', 'how about', or a comparative without an object, 'faster?'), since 'And how fast is the
     small dense encoder?' asks about a new subject while 'And the results?' does not;
   * otherwise (one key term, or an elliptic form with few): a follow-up.

   A follow-up gets the key terms of the previous standalone question that it lacks in front of it,
   ``"<terms>: <follow-up>"``, and is answered from the papers the thread cited last (:func:`last_cited`,
   :attr:`Rewrite.papers`, within the caller's paper restriction), so that a carried word cannot pull a
   passage of another paper into the thread. A standalone message is answered as asked, over the caller's
   papers. Key terms are words of three or more characters, or with a digit or an inner capital (F1, GPT-4,
   BERT), that are not stop words (:data:`lit3r.retrieval.planning.STOP_WORDS`), in order, at most
   :data:`MAX_TERMS`. The first message of a thread is never rewritten. The decision (the form found, what was
   carried and the papers, or why the message stands alone) is the rewrite's ``reason``. A question the model
   rewrote sets no paper limit: the model read the conversation and wrote the subject out.
2. **Answer.** The agent graph answers the standalone question in the thread. The thread's state is
   checkpointed, so the pool of earlier questions is carried into the new one with decayed scores and
   citation numbers stay stable within the thread (:mod:`lit3r.agent.state`); :func:`turns_of` reads the
   answered turns back from that state.
3. **Trace.** The trace (``<home>/traces/<id>.json``) holds the rewrite, the model call when there was one,
   and every step of the answer, plus the user's message and the thread id.

A session closed and opened again with the same home and thread id (another process, after a restart)
sees the same history and goes on with the same pool and citation numbers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field

from lit3r.answers.validate import marker_numbers
from lit3r.llm.errors import LLMError
from lit3r.llm.trace import TraceRecorder
from lit3r.llm.wrapper import LLM
from lit3r.prompts.chat import REWRITE_SYSTEM, render_rewrite
from lit3r.retrieval.planning import STOP_WORDS, named_terms

HISTORY_TURNS = 3
"""Earlier turns the model sees when it rewrites a follow-up."""
OWN_TERMS = 2
"""A message with no anaphora and at least this many key terms names its own subject: it stands alone."""
ELLIPTIC_OWN_TERMS = 3
"""The same for a message of elliptic form ('And ...?', 'What about ...?', 'faster?'): it needs more."""
MAX_TERMS = 8
"""At most this many key terms are put in front of a follow-up."""

_WORD = re.compile(r"[A-Za-z0-9]+(?:[-_./'][A-Za-z0-9]+)*")
REFERRING_NOUNS = (
    "paper", "method", "model", "approach", "work", "study", "dataset", "system", "technique", "benchmark", "metric",
    "result", "table", "figure", "author", "one",
)  # fmt: skip
"""Nouns that point back at something the conversation named after 'that' or 'the' ('that paper', 'the authors')."""
ANAPHORA = re.compile(
    r"\b(?:it|its|they|them|their|theirs|this|these|those|the same)\b"
    rf"|\bthat (?:{'|'.join(REFERRING_NOUNS)})s?\b"
    r"|\b(?:is|was|are|were|does|do|did) that\b|\bthat\s*\?*$",
    re.IGNORECASE,
)
"""Words that refer to something the conversation named (see the module docstring)."""
DEFINITE = re.compile(rf"\bthe (?:{'|'.join(REFERRING_NOUNS)})s?\b", re.IGNORECASE)
"""'the dataset', 'the authors': refers back unless the message names a subject ('the dataset of SQuAD')."""
COMPARATIVES = (
    "better", "worse", "faster", "slower", "larger", "smaller", "bigger", "higher", "lower", "cheaper", "more", "less",
    "fewer",
)  # fmt: skip
"""Comparatives that, closing a message with no 'than', compare with something the conversation named."""
ELLIPSIS = re.compile(
    rf"^(?:and|also|what about|how about)\b|\b(?:{'|'.join(COMPARATIVES)})\s*\?*$",
    re.IGNORECASE,
)
"""Openings and endings that leave out what the conversation supplies (see the module docstring)."""

RewriteMethod = Literal["first", "unchanged", "rule", "llm"]


class StandaloneQuestion(BaseModel):
    """The follow-up rewritten so that it stands alone."""

    question: str = Field(description="One standalone question; the follow-up itself when it already stands alone.")


class Rewrite(BaseModel):
    """How a chat message became the question the agent answered."""

    message: str = Field(description="The message as the user typed it (spacing folded).")
    question: str = Field(description="The standalone question the agent answered.")
    method: RewriteMethod = Field(
        description="'first' (no earlier turn), 'unchanged' (it stands alone), 'rule' (offline rule), 'llm'."
    )
    reason: str = Field(
        default="", description="Why: the follow-up's form and what was carried, or why it stands alone."
    )
    papers: list[str] | None = Field(
        default=None, description="Answer from these papers only: those the thread cited last (None: no limit)."
    )

    def allowed(self, allowed_papers: Sequence[str] | None) -> list[str] | None:
        """The papers to answer from: the caller's restriction narrowed to :attr:`papers` (the caller's alone
        when the two share no paper, or when the rewrite sets no limit)."""
        if self.papers is None:
            return None if allowed_papers is None else list(allowed_papers)
        if allowed_papers is None:
            return list(self.papers)
        narrowed = [p for p in allowed_papers if p in self.papers]
        return narrowed or list(allowed_papers)


class ChatTurn(BaseModel):
    """One answered turn of a thread, as kept in its checkpoint."""

    question: str = Field(description="The standalone question that was answered.")
    answer: str = Field(description="The answer text with its inline markers [n].")
    citations: dict[int, str] = Field(default_factory=dict, description="Marker number -> cited chunk id.")

    @property
    def papers(self) -> list[str]:
        """The papers the answer cites, in marker order (a chunk id is ``'<paper id>::c<n>'``)."""
        return list(dict.fromkeys(self.citations[n].rsplit("::", 1)[0] for n in sorted(self.citations)))


def key_terms(text: str) -> list[str]:
    """The words of ``text`` that carry content (see the module docstring), in order, without repeats."""
    terms: dict[str, str] = {}
    for word in _WORD.findall(text):
        named = any(c.isdigit() for c in word) or any(c.isupper() for c in word[1:])
        if (named or len(word) >= 3) and word.lower() not in STOP_WORDS:
            terms.setdefault(word.lower(), word)
    return list(terms.values())


def classify(message: str) -> tuple[bool, str]:
    """Whether ``message`` is a follow-up, by its form alone (see the module docstring), and why."""
    if (anaphora := ANAPHORA.search(message)) is not None:
        return True, f"refers back ({anaphora.group(0).strip()!r})"
    if named := named_terms(message):  # "What is ELMo?": short, but it names its own subject
        return False, f"stands alone: it names its subject ({', '.join(named)})"
    if (definite := DEFINITE.search(message)) is not None:
        return True, f"refers back ({definite.group(0)!r})"
    own = key_terms(message)
    ellipsis = ELLIPSIS.search(message)
    needed = OWN_TERMS if ellipsis is None else ELLIPTIC_OWN_TERMS
    if len(own) >= needed:
        return False, f"stands alone: {len(own)} key terms of its own ({', '.join(own)})"
    if ellipsis is not None:
        return True, f"elliptic ({ellipsis.group(0).strip()!r}) with {len(own)} key terms"
    return True, f"short ({len(own)} key terms)"


def rule_rewrite(message: str, previous: str | None, cited_papers: Sequence[str] = ()) -> Rewrite:
    """The offline rewrite: a follow-up (by its form) gets the previous question's missing key terms in front
    and ``cited_papers`` (the thread's, :func:`last_cited`) as its papers; a message naming its own subject
    stands alone."""
    if previous is None:
        return Rewrite(message=message, question=message, method="first")
    follow_up, reason = classify(message)
    if not follow_up:
        return Rewrite(message=message, question=message, method="unchanged", reason=reason)
    papers = list(dict.fromkeys(cited_papers)) or None
    scope = f"; answered from the papers cited before ({', '.join(papers)})" if papers else ""
    own = {t.lower() for t in key_terms(message)}
    missing = [t for t in key_terms(previous) if t.lower() not in own][:MAX_TERMS]
    if not missing:
        reason = f"{reason}; nothing to add{scope}"
        return Rewrite(message=message, question=message, method="unchanged", reason=reason, papers=papers)
    reason = f"{reason}; carried {', '.join(missing)}{scope}"
    return Rewrite(
        message=message, question=f"{' '.join(missing)}: {message}", method="rule", reason=reason, papers=papers
    )


def llm_rewrite(llm: LLM, message: str, turns: Sequence[ChatTurn]) -> Rewrite:
    """The model's standalone question for ``message`` after ``turns``; the offline rule when the call fails."""
    prompt = render_rewrite(message, [(t.question, t.answer) for t in turns])
    messages = [SystemMessage(REWRITE_SYSTEM), HumanMessage(prompt)]
    try:
        question = " ".join(llm.structured(messages, StandaloneQuestion, name="rewrite").question.split())
        problem = "" if question else "the model wrote an empty question"
    except LLMError as exc:
        question, problem = "", f"the model call failed ({exc})"
    if problem:
        fallback = rule_rewrite(message, turns[-1].question, last_cited(turns))
        return fallback.model_copy(update={"reason": f"{problem}; {fallback.reason}"})
    method: RewriteMethod = "unchanged" if question == message else "llm"
    return Rewrite(message=message, question=question, method=method, reason="rewritten by the model")


def rewrite_followup(message: str, turns: Sequence[ChatTurn], llm: LLM | None, recorder: TraceRecorder) -> Rewrite:
    """The standalone question for ``message`` (one ``rewrite`` trace event; the model call records its own)."""
    name = "llm" if llm is not None and turns else "rule"
    with recorder.step("rewrite", name) as data:
        if llm is not None and turns:
            rewrite = llm_rewrite(llm, message, turns)
        elif turns:
            rewrite = rule_rewrite(message, turns[-1].question, last_cited(turns))
        else:
            rewrite = rule_rewrite(message, None)
        data.update(rewrite.model_dump())
    return rewrite


def last_cited(turns: Sequence[ChatTurn]) -> list[str]:
    """The papers of the latest turn that cited any (an abstaining turn leaves the subject where it was)."""
    return next((turn.papers for turn in reversed(turns) if turn.papers), [])


def turns_of(values: dict[str, Any]) -> list[ChatTurn]:
    """The answered turns of a thread's checkpointed state: each question with its closing answer."""
    by_number = {n: c for c, n in (values.get("citation_numbers") or {}).items()}
    turns: list[ChatTurn] = []
    question: str | None = None
    answer: str | None = None
    for message in [*values.get("messages", []), HumanMessage("")]:
        if isinstance(message, HumanMessage):
            if question is not None and answer is not None:
                cited = {n: by_number[n] for n in marker_numbers(answer) if n in by_number}
                turns.append(ChatTurn(question=question, answer=answer, citations=cited))
            question, answer = message.text, None
        elif _closing(message):
            answer = message.text
    return turns


def _closing(message: AnyMessage) -> bool:
    """An AI message that calls no tool: the closing answer of a question."""
    return isinstance(message, AIMessage) and not message.tool_calls and bool(message.text)
