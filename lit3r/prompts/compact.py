"""The compact reader's prompts: short enough for a 0.5B-1.5B model, one JSON object per call.

The fixed part (system prompt and instructions) comes first and is the same for every question, so llama.cpp
reuses its evaluated prefix from one question to the next; the numbered passages and the question follow. The
reply's shape is given by the tool schema (grammar-constrained on llama.cpp); the prompt says what goes in it.
"""

from __future__ import annotations

from collections.abc import Sequence

from lit3r.prompts.common import EVIDENCE_IS_DATA, fill, neutralise, tagged

COMPACT_SYSTEM = f"""You answer questions about scientific papers from numbered passages only, never from memory.
{EVIDENCE_IS_DATA}"""
"""System prompt of every compact reader call."""

COMPACT_READ = """Read the passages, then answer the question at the end.

Fill the JSON fields:
- "support": the passages the answer rests on (1 to 3): each with its "passage" number and a "quote" copied \
exactly from that passage (a few words to one sentence).
- "kind": "yes" or "no" for a yes/no question; "span" when the answer is a short phrase copied from a passage \
(a name, a number, a method, a dataset); "sentence" when it needs a sentence in your words; "unanswerable" when \
the passages do not answer the question (then "support" quotes the passage that comes closest).
- "answer": the short answer: a few words for "span", one sentence for "sentence", empty for "yes", "no" and \
"unanswerable". Name the specific things the passages give (names, numbers, datasets, methods), not a general \
phrase such as "various datasets" or "the proposed model".

{examples}

Now the real passages and question.

{passages}

Question: {question}{hint}"""
"""The one read call; placeholders: examples (:data:`EXAMPLES`), passages (the evidence block), question, hint
(the question's form). Everything before the passages is the same for every question, so llama.cpp evaluates it
once per server."""

EXAMPLE_PASSAGES = (
    (1, "We train on WikiQA and test on TrecQA and InsuranceQA. All models use 300-dimensional vectors.", "Data"),
    (2, "The encoder is a two-layer BiLSTM initialised with GloVe embeddings.", "Model"),
)
"""The worked example's passages (invented, not from any evaluation set)."""

EXAMPLE_ANSWERS = (
    (
        "Which datasets do they test on?",
        '{"support": [{"passage": 1, "quote": "test on TrecQA and InsuranceQA"}], "kind": "span", '
        '"answer": "TrecQA and InsuranceQA"}',
    ),
    (
        "Do they use pretrained word embeddings?",
        '{"support": [{"passage": 2, "quote": "initialised with GloVe embeddings"}], "kind": "yes", "answer": ""}',
    ),
    (
        "How is the encoder built?",
        '{"support": [{"passage": 2, "quote": "The encoder is a two-layer BiLSTM initialised with GloVe '
        'embeddings."}], "kind": "sentence", "answer": "A two-layer BiLSTM initialised with GloVe embeddings."}',
    ),
    (
        "How large is their vocabulary?",
        '{"support": [{"passage": 1, "quote": "All models use 300-dimensional vectors."}], "kind": "unanswerable", '
        '"answer": ""}',
    ),
)
"""The worked example's questions and replies: a span naming the things, a yes/no, a sentence, an unanswerable
question."""

FORM_HINTS = {
    "boolean": '\n(This is a yes/no question: kind is "yes" or "no" unless the passages do not say.)',
    "quantity": "\n(The answer is a number: copy it with its unit as a span.)",
}
"""A line naming the answer form the question's wording asks for (:func:`lit3r.answers.question.answer_form`);
other forms get none."""

OPTIONS_HINT = '\nOptions: {options}\n("answer" is the letter of the one option the passages support.)'

COMPACT_GENERIC = (
    "The answer {answer!r} only repeats the question: give the specific names, numbers or words the passages use, "
    'or kind "unanswerable" if no passage gives them.'
)
"""The error a repair call is told when an answer names nothing the question did not; placeholder: answer."""

COMPACT_REPAIR = """That reply cannot be used:
{errors}
Answer again from the same passages, copying each quote exactly from the passage it names."""
"""The one repair call after a reply no deterministic repair could save; placeholder: errors."""


def render_passages(passages: Sequence[tuple[int, str, str | None]]) -> str:
    """``<evidence>`` with one ``<passage n=.. section=..>`` block per (number, text, section)."""
    blocks = [tagged("passage", text, n=number, section=section) for number, text, section in passages]
    return "<evidence>\n" + ("\n".join(blocks) or "(no passages)") + "\n</evidence>"


def render_compact(
    question: str, passages: str, *, form: str | None = None, options: dict[str, str] | None = None
) -> str:
    """The read prompt over rendered ``passages``, with the form hint and any lettered options."""
    hint = FORM_HINTS.get(form or "", "")
    if options:
        listed = "; ".join(f"{letter}. {neutralise(text)}" for letter, text in options.items())
        hint = fill(OPTIONS_HINT, options=listed)
    return fill(COMPACT_READ, examples=EXAMPLES, passages=passages, question=neutralise(question), hint=hint)


def _examples() -> str:
    shown = render_passages(EXAMPLE_PASSAGES)
    replies = "\n".join(f"Question: {question}\nReply: {reply}" for question, reply in EXAMPLE_ANSWERS)
    return f"Example passages:\n{shown}\n{replies}"


EXAMPLES = _examples()
"""The worked example as the prompt shows it."""


def render_compact_repair(errors: Sequence[str]) -> str:
    """The repair prompt, one error a line."""
    return fill(COMPACT_REPAIR, errors="\n".join(f"- {neutralise(e)}" for e in errors) or "- (unknown error)")
