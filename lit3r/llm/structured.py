"""Structured output: how a pydantic schema is asked for, and how a reply is read back into it."""

from __future__ import annotations

import json
import re
from typing import Any, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)

REPAIR_PROMPT = """Your previous reply could not be used: it is not a valid {schema} object.

<invalid_output>
{output}
</invalid_output>

<validation_error>
{error}
</validation_error>

Answer the request above again. Reply with only a corrected {schema} object."""
"""Shown once after an unusable structured reply; placeholders: schema, output, error."""

JSON_MODE_PROMPT = "Reply with one JSON object, and nothing else, that validates against this JSON schema:\n{schema}"
"""Added to the system message in ``json_mode``, where the endpoint is not told the schema."""

MAX_SHOWN_OUTPUT = 4000
"""Characters of an unusable reply shown back to the model in the repair prompt."""


class _Unusable(ValueError):
    """A reply that holds no candidate for the schema (empty, refused, broken tool-call arguments)."""


def tool_name(schema: type[BaseModel]) -> str:
    """The function name a schema gets as a tool or a response format."""
    return convert_to_openai_tool(schema)["function"]["name"]


def response_format(schema: type[BaseModel]) -> dict[str, Any]:
    """The OpenAI ``response_format`` asking for ``schema`` as JSON (non-strict: we validate ourselves)."""
    function = convert_to_openai_tool(schema)["function"]
    spec = {"name": function["name"], "schema": function["parameters"]}
    if function.get("description"):
        spec["description"] = function["description"]
    return {"type": "json_schema", "json_schema": spec}


def json_text(text: str) -> str:
    """The JSON part of a reply: without Markdown fences or prose around the outermost object."""
    text = text.strip()
    fenced = re.fullmatch(r"```(?:json)?\s*(.*?)\s*```", text, flags=re.DOTALL)
    if fenced:
        text = fenced.group(1)
    if not text:
        raise _Unusable("the reply is empty")
    start, end = text.find("{"), text.rfind("}")
    if not text.startswith(("{", "[")) and 0 <= start < end:
        text = text[start : end + 1]
    return text


def parse_reply(message: AIMessage, schema: type[T]) -> T:
    """Validate a reply against ``schema``: the matching tool call's arguments, else the text as JSON.

    Raises:
        ValidationError: the candidate does not validate (or is not JSON).
        ValueError: there is no candidate at all (empty reply, refusal, unparsable tool-call arguments).
    """
    if refusal := message.additional_kwargs.get("refusal"):
        raise _Unusable(f"the model refused: {refusal}")
    if message.tool_calls:
        wanted = tool_name(schema)
        call = next((c for c in message.tool_calls if c["name"] == wanted), message.tool_calls[0])
        return schema.model_validate(call["args"])
    if message.invalid_tool_calls:
        bad = message.invalid_tool_calls[0]
        raise _Unusable(f"tool call arguments are not valid JSON: {bad.get('args')!r} ({bad.get('error')})")
    return schema.model_validate_json(json_text(message.text))


def shown_output(message: AIMessage) -> str:
    """What the model produced, as text: its content, else its tool-call arguments."""
    if message.text.strip():
        return message.text
    if message.tool_calls:
        return json.dumps(message.tool_calls[0]["args"], ensure_ascii=False)
    if message.invalid_tool_calls:
        return str(message.invalid_tool_calls[0].get("args") or "")
    return ""


def explain(exc: ValueError) -> str:
    """A compact error list for the repair prompt (one line per failing field)."""
    if isinstance(exc, ValidationError):
        return "\n".join(f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}" for e in exc.errors())
    return str(exc)


def with_schema_hint(messages: list[BaseMessage], schema: type[BaseModel]) -> list[BaseMessage]:
    """``messages`` with the JSON schema spelled out in the system message (for ``json_mode``)."""
    hint = JSON_MODE_PROMPT.format(schema=json.dumps(convert_to_openai_tool(schema)["function"]["parameters"]))
    if messages and isinstance(messages[0], SystemMessage) and isinstance(messages[0].content, str):
        return [SystemMessage(f"{messages[0].content}\n\n{hint}"), *messages[1:]]
    return [SystemMessage(hint), *messages]
