"""An OpenAI-compatible chat server over gpt4all's prebuilt llama.cpp: the local reader without compiling.

llama-cpp-python is an sdist (installing it compiles llama.cpp, 15-30 minutes on 2 cores); ``gpt4all`` ships a
manylinux wheel with llama.cpp inside that runs the same GGUF files. ``python -m lit3r.llm.wheel_server`` takes
the options :func:`lit3r.llm.local_server.server_arguments` gives ``llama_cpp.server`` (``--model``,
``--model_alias``, ``--host``, ``--port``, ``--n_ctx``, ``--n_threads``, ...), so :class:`LocalServer` starts
either one unchanged. It listens on loopback only, answers ``GET /v1/models`` once the model is loaded, and
``POST /v1/chat/completions`` one request at a time (no streaming).

What it does like llama-cpp-python's server with the GGUF's own chat template: the prompt is that template
(``tokenizer.chat_template``, rendered with jinja2 as llama-cpp-python and transformers render it, tools
included); temperature 0 is greedy decoding with the same repeat penalty (1.1 over the last 64 tokens); the
prefix a call shares with the earlier ones is not evaluated again (:class:`Gpt4AllGenerator`).

What differs from llama.cpp's grammar: gpt4all cannot constrain sampling, so a *forced* tool call
(``tool_choice`` naming a function) is asked for, not enforced. The reply is started for the model in the
template's own tool-call syntax (``<tool_call>\\n{"name": ..., "arguments": `` for Qwen/Hermes templates; else
the schema is spelled out in the system message) and the arguments' first key (:func:`scaffold`: a grammar forces
it; left alone, a 1.5B model copied the schema instead of filling it), generation stops where the JSON object
closes, and
:func:`read_arguments` parses it and applies the schema's bounds the grammar would have enforced (``maxItems``,
``maxLength``: longer arrays and strings are cut). A reply that parses comes back as a tool call, whether or not
it validates (what :func:`schema_problems` finds goes to the server's log; the client validates with its own,
more lenient, pydantic model and spends its one repair call); a reply that does not parse comes back as text,
which the client's structured-output repair handles like any unusable reply. With ``tool_choice`` 'auto' the
template's ``<tool_call>`` blocks in the reply become tool calls.
"""

from __future__ import annotations

import argparse
import json
import re
import struct
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, BinaryIO, Protocol

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
REPEAT_PENALTY = 1.1
REPEAT_LAST_N = 64
DEFAULT_MAX_TOKENS = 512
HERMES_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)
MAX_BODY = 8 << 20


# --- the GGUF's chat template --------------------------------------------------------------------------------


_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9


def _string(handle: BinaryIO) -> str:
    (length,) = struct.unpack("<Q", handle.read(8))
    return handle.read(length).decode("utf-8", "replace")


def _value(handle: BinaryIO, kind: int) -> Any:
    if kind == _STRING:
        return _string(handle)
    if kind == _ARRAY:
        item, count = struct.unpack("<IQ", handle.read(12))
        return [_value(handle, item) for _ in range(count)]
    fmt = _SCALARS[kind]
    return struct.unpack(fmt, handle.read(struct.calcsize(fmt)))[0]


def gguf_metadata(path: Path) -> dict[str, Any]:
    """The key-value metadata at the head of a GGUF file (version 2 or 3), arrays included."""
    with path.open("rb") as raw:
        if raw.read(4) != b"GGUF":
            raise ValueError(f"{path} is not a GGUF file")
        (version,) = struct.unpack("<I", raw.read(4))
        if version < 2:
            raise ValueError(f"{path}: GGUF version {version} is not supported")
        _tensors, count = struct.unpack("<QQ", raw.read(16))
        metadata = {}
        for _ in range(count):
            key = _string(raw)
            (kind,) = struct.unpack("<I", raw.read(4))
            metadata[key] = _value(raw, kind)
    return metadata


@dataclass(frozen=True)
class ModelInfo:
    """What the server needs from the GGUF besides the weights."""

    chat_template: str
    bos_token: str
    eos_token: str
    bpe: bool
    """A GPT-2 style byte-level BPE tokenizer (Qwen2, Llama 3): a prompt split after a newline run tokenizes as
    the whole does, so an evaluated prefix can be reused at line boundaries."""


def model_info(path: Path) -> ModelInfo:
    """The chat template, the BOS and EOS tokens' text and the tokenizer family of the GGUF at ``path``."""
    metadata = gguf_metadata(path)
    template = metadata.get("tokenizer.chat_template")
    if not isinstance(template, str):
        raise ValueError(f"{path} holds no chat template (tokenizer.chat_template)")
    tokens = metadata.get("tokenizer.ggml.tokens") or []

    def token(key: str) -> str:
        index = metadata.get(key)
        return tokens[index] if isinstance(index, int) and 0 <= index < len(tokens) else ""

    return ModelInfo(
        chat_template=template,
        bos_token=token("tokenizer.ggml.bos_token_id"),
        eos_token=token("tokenizer.ggml.eos_token_id"),
        bpe=metadata.get("tokenizer.ggml.model") == "gpt2",
    )


class ChatTemplate:
    """The GGUF's jinja2 chat template, rendered as llama-cpp-python's ``Jinja2ChatFormatter`` renders it."""

    def __init__(self, info: ModelInfo) -> None:
        from jinja2 import BaseLoader
        from jinja2.ext import loopcontrols
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        environment = ImmutableSandboxedEnvironment(
            loader=BaseLoader(), trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]
        )
        environment.filters["tojson"] = lambda value, indent=None, **_: json.dumps(
            value, ensure_ascii=False, indent=indent
        )
        self.info = info
        self._template = environment.from_string(info.chat_template)

    def render(self, messages: list[dict[str, Any]], tools: list[dict] | None = None, *, generate: bool = True) -> str:
        """The prompt for ``messages`` (and ``tools``), ending with the assistant's turn when ``generate``."""

        def raise_exception(message: str) -> None:
            raise ValueError(message)

        return self._template.render(
            messages=messages,
            tools=tools or None,
            add_generation_prompt=generate,
            bos_token=self.info.bos_token,
            eos_token=self.info.eos_token,
            raise_exception=raise_exception,
            strftime_now=lambda fmt: time.strftime(fmt),
        )

    def message_starts(self, messages: list[dict[str, Any]], tools: list[dict] | None, prompt: str) -> list[int]:
        """Where each message after the first starts in ``prompt`` (the offsets at which prefixes can be reused)."""
        starts = []
        for n in range(1, len(messages)):
            head = self.render(messages[:n], tools, generate=False)
            if prompt.startswith(head):
                starts.append(len(head))
        return starts


# --- the runtime -----------------------------------------------------------------------------------------------


@dataclass
class Generation:
    """One completion: the text after the prompt, token counts, and why it stopped."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str  # "stop" (end of turn or the caller's stop), "length" (max_tokens)
    reused_tokens: int = 0
    """Prompt tokens not evaluated again: the prefix shared with earlier calls."""


class Generator(Protocol):
    """Continues a prompt (tests pass a scripted one)."""

    def generate(
        self,
        prompt: str,
        *,
        max_tokens: int,
        temperature: float,
        boundaries: Sequence[int] = (),
        stop: Callable[[str], bool] | None = None,
    ) -> Generation:
        """The continuation of ``prompt``; ``stop(text so far)`` ends it early; ``boundaries`` are offsets where
        the prompt may be split for prefix reuse."""
        ...


class ContextOverflow(ValueError):
    """The prompt does not fit the context window."""


def line_boundaries(text: str, end: int) -> list[int]:
    """Offsets up to ``end`` right after a run of newlines that is followed by a non-space character: splitting
    a byte-level BPE prompt there tokenizes as the whole does (no pre-token spans such a point)."""
    return [m.end() for m in re.finditer(r"\n+(?=\S)", text[:end])]


class PrefixCache:
    """Which pieces of a prompt are in the model's context already, and how to split the rest.

    The pieces evaluated so far are remembered with their token counts; a new prompt that starts with some of
    them rewinds the context to their end and evaluates only the rest. The rest is split at message starts
    and, for a byte-level BPE tokenizer, at the last line boundary the new prompt shares with the previous one,
    so a fixed instruction block at the head of a message is evaluated once it has been seen twice (llama.cpp's
    server reuses the prefix shared with the previous call token by token).
    """

    def __init__(self, *, bpe: bool) -> None:
        self.bpe = bpe
        self.pieces: list[tuple[str, int]] = []
        """The prompt pieces in the context now, in order, with their token counts."""

    def plan(self, prompt: str, boundaries: Sequence[int] = ()) -> tuple[int, int, list[tuple[int, int]]]:
        """(pieces kept, their tokens, the (start, end) spans of ``prompt`` still to evaluate, in order)."""
        kept = chars = tokens = 0
        for text, count in self.pieces:
            if not prompt.startswith(text, chars):
                break
            kept, chars, tokens = kept + 1, chars + len(text), tokens + count
        cuts = {b for b in boundaries if chars < b < len(prompt)}
        if self.bpe and self.pieces:
            previous = "".join(text for text, _ in self.pieces)
            shared = next((i for i, (a, b) in enumerate(zip(prompt, previous, strict=False)) if a != b), None)
            shared = min(len(prompt), len(previous)) if shared is None else shared
            cuts.update(b for b in line_boundaries(prompt, shared)[-1:] if chars < b < len(prompt))
        edges = [chars, *sorted(cuts), len(prompt)]
        return kept, tokens, list(zip(edges, edges[1:], strict=False))

    def keep(self, kept: int, evaluated: list[tuple[str, int]]) -> None:
        """The context now holds the first ``kept`` pieces, then ``evaluated``."""
        self.pieces = self.pieces[:kept] + evaluated


class Gpt4AllGenerator:
    """gpt4all's llama.cpp on one GGUF, CPU only, with the evaluated prompt kept between calls (:class:`PrefixCache`).

    gpt4all evaluates a prompt in pieces, each continuing the context (``n_past``): setting ``n_past`` back to
    the end of the pieces a new prompt shares drops the rest of the context (llama.cpp's KV cache past it).
    """

    def __init__(self, model: Path, *, n_ctx: int, n_threads: int, bpe: bool) -> None:
        from gpt4all import GPT4All

        self._gpt4all = GPT4All(
            model.name, model_path=str(model.parent), allow_download=False, device="cpu", n_ctx=n_ctx, verbose=False
        )
        self.model = self._gpt4all.model
        self.model.set_thread_count(n_threads)
        self.cache = PrefixCache(bpe=bpe)

    def _run(self, text: str, n_predict: int, params: dict[str, Any], on_token: Callable[[int, str], bool]) -> int:
        """Evaluate ``text`` after the context (then generate up to ``n_predict`` tokens); its prompt tokens."""
        count = 0

        def prompt_callback(_token: int) -> bool:
            nonlocal count
            count += 1
            return True

        self.model._prompt_callback = prompt_callback  # the binding passes this one to llama.cpp for each token
        # "%1%2": the prompt as it is; a template without %2 would have gpt4all append a blank line after the reply
        self.model.prompt_model(text, "%1%2", on_token, n_predict=n_predict, special=True, **params)
        return count

    def generate(
        self,
        prompt: str,
        *,
        max_tokens: int,
        temperature: float,
        boundaries: Sequence[int] = (),
        stop: Callable[[str], bool] | None = None,
    ) -> Generation:
        kept, past, spans = self.cache.plan(prompt, boundaries)
        params: dict[str, Any] = {"repeat_penalty": REPEAT_PENALTY, "repeat_last_n": REPEAT_LAST_N, "n_batch": 128}
        params |= {"temp": 0.0, "top_k": 1} if temperature <= 0 else {"temp": temperature, "top_k": 40, "top_p": 0.95}
        self.cache.keep(kept, [])  # until this call has finished, the context past the kept pieces is unknown
        self.model._set_context(reset_context=True)
        self.model.context.n_past = past
        out: list[str] = []
        errors: list[str] = []
        stopped = False

        def on_token(token: int, piece: str) -> bool:
            nonlocal stopped
            if token == -1:  # gpt4all reports an error (a prompt beyond the context) as a response
                errors.append(piece)
                return False
            out.append(piece)
            if stop is not None and stop("".join(out)):
                stopped = True
                return False
            return True

        evaluated = []
        for n, (a, b) in enumerate(spans):
            count = self._run(prompt[a:b], max_tokens if n == len(spans) - 1 else 0, params, on_token)
            if errors:
                raise ContextOverflow(errors[0])
            evaluated.append((prompt[a:b], count))
        self.cache.keep(kept, evaluated)
        finish = "length" if not stopped and len(out) >= max_tokens else "stop"
        return Generation("".join(out), past + sum(n for _, n in evaluated), len(out), finish, reused_tokens=past)


# --- requests and replies --------------------------------------------------------------------------------------


def text_of(content: Any) -> str:
    """A message's content as text (OpenAI's list of parts: the text parts joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content if isinstance(part, dict))


def template_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Request messages as chat templates expect them: text content, tool-call arguments as objects."""
    shown = []
    for message in messages:
        item = {"role": message.get("role", "user"), "content": text_of(message.get("content"))}
        if calls := message.get("tool_calls"):
            item["tool_calls"] = [
                {**call, "function": {**call["function"], "arguments": _loads(call["function"].get("arguments"))}}
                for call in calls
            ]
        shown.append(item)
    return shown


def _loads(arguments: Any) -> Any:
    if not isinstance(arguments, str):
        return arguments
    try:
        return json.loads(arguments)
    except json.JSONDecodeError:
        return arguments


def object_end(text: str) -> int | None:
    """The offset just after the first complete JSON object in ``text`` (None while it is still open)."""
    depth, in_string, escaped = 0, False, False
    for i, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with a local ``$ref`` (``#/$defs/Name``) followed."""
    while isinstance(schema, dict) and isinstance(ref := schema.get("$ref"), str) and ref.startswith("#/"):
        target: Any = root
        for key in ref[2:].split("/"):
            target = target.get(key, {}) if isinstance(target, dict) else {}
        schema = target
    return schema


def bounded(value: Any, schema: dict[str, Any], root: dict[str, Any] | None = None) -> Any:
    """``value`` cut to the schema's ``maxItems`` and ``maxLength`` bounds (what a grammar would not have let
    the model write), recursively through properties and items."""
    root = root if root is not None else schema
    schema = _resolve(schema, root)
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        return {k: bounded(v, properties[k], root) if k in properties else v for k, v in value.items()}
    if isinstance(value, list):
        items = schema.get("items", {})
        cut = value[: schema["maxItems"]] if isinstance(schema.get("maxItems"), int) else value
        return [bounded(v, items, root) for v in cut]
    if isinstance(value, str) and isinstance(schema.get("maxLength"), int):
        return value[: schema["maxLength"]]
    return value


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}


def schema_problems(value: Any, schema: dict[str, Any], root: dict[str, Any] | None = None, at: str = "") -> list[str]:
    """Where ``value`` breaks ``schema`` (types, enums, required properties, array sizes, anyOf), one line each."""
    root = root if root is not None else schema
    schema = _resolve(schema, root)
    where = at or "(root)"
    if options := schema.get("anyOf"):
        return [] if any(not schema_problems(value, o, root, at) for o in options) else [f"{where}: matches no anyOf"]
    kind = schema.get("type")
    if isinstance(kind, str) and kind in _TYPES:
        wrong = not isinstance(value, _TYPES[kind]) or (isinstance(value, bool) and kind in ("integer", "number"))
        if wrong:
            return [f"{where}: expected {kind}, got {type(value).__name__}"]
    if "enum" in schema and value not in schema["enum"]:
        return [f"{where}: {value!r} is not one of {schema['enum']}"]
    problems = []
    if isinstance(value, dict):
        problems += [f"{where}: {key!r} is missing" for key in schema.get("required", []) if key not in value]
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                problems += schema_problems(value[key], sub, root, f"{at}.{key}" if at else key)
    if isinstance(value, list):
        if isinstance(schema.get("minItems"), int) and len(value) < schema["minItems"]:
            problems.append(f"{where}: fewer than {schema['minItems']} items")
        for i, item in enumerate(value):
            problems += schema_problems(item, schema.get("items", {}), root, f"{at}[{i}]")
    return problems


def scaffold(schema: dict[str, Any], root: dict[str, Any] | None = None) -> str:
    """The start of a JSON object for ``schema`` up to its first property's value, written for the model: the
    first property's key and, where that value is an array of objects or an object, the way into it
    (``{"support": [{"passage":`` for the compact reader's reply). A grammar would force these characters; a
    small model shown a schema and left to start alone tends to copy the schema instead of filling it."""
    root = root if root is not None else schema
    schema = _resolve(schema, root)
    properties = schema.get("properties") or {}
    if schema.get("type", "object") != "object" or not properties:
        return "{"
    first = next(iter(properties))
    inner = _resolve(properties[first], root)
    opening = f"{{{json.dumps(first)}:"  # no space after the colon: the model's next token brings its own
    if inner.get("type") == "object" and inner.get("properties"):
        return f"{opening} {scaffold(inner, root)}"
    items = _resolve(inner.get("items") or {}, root)
    if inner.get("type") == "array" and items.get("type") == "object" and items.get("properties"):
        return f"{opening} [{scaffold(items, root)}"
    return opening


def read_arguments(text: str, schema: dict[str, Any]) -> tuple[Any, list[str]] | None:
    """The JSON object at the start of ``text`` cut to the schema's bounds, and its schema problems; None when
    ``text`` holds no JSON object."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    value = bounded(value, schema)
    return value, schema_problems(value, schema)


class ChatService:
    """Chat-completion requests in, completions out: the OpenAI protocol over a template and a generator."""

    def __init__(self, template: ChatTemplate, generator: Generator, alias: str, log: Callable[[str], None]) -> None:
        self.template = template
        self.generator = generator
        self.alias = alias
        self.log = log
        self.lock = threading.Lock()
        self.calls = 0

    def models(self) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": self.alias, "object": "model", "owned_by": "lit3r"}]}

    def complete(self, request: dict[str, Any]) -> dict[str, Any]:
        """The chat completion for one request (raises ValueError for a request it cannot serve)."""
        if request.get("stream"):
            raise ValueError("streaming is not supported by lit3r's wheel server")
        messages = template_messages(request.get("messages") or [])
        if not messages:
            raise ValueError("messages must not be empty")
        tools = request.get("tools") or None
        choice = request.get("tool_choice")
        forced = self._forced_tool(tools, choice)
        if choice == "none":
            tools = None
        max_tokens = int(request.get("max_tokens") or request.get("max_completion_tokens") or DEFAULT_MAX_TOKENS)
        temperature = float(request.get("temperature") if request.get("temperature") is not None else 0.8)
        prompt, prefill = self._prompt(messages, tools, forced)
        boundaries = self.template.message_starts(messages, tools, prompt)
        opening = scaffold(forced.get("parameters", {})) if forced is not None else ""
        wants_object = forced is not None or (request.get("response_format") or {}).get("type") in (
            "json_object",
            "json_schema",
        )
        stop = (lambda text: object_end(opening + text) is not None) if wants_object else None
        with self.lock:
            started = time.perf_counter()
            generation = self.generator.generate(
                prompt + prefill + opening,
                max_tokens=max_tokens,
                temperature=temperature,
                boundaries=boundaries,
                stop=stop,
            )
            self.calls += 1
            self.log(
                f"call {self.calls}: {generation.prompt_tokens} prompt ({generation.reused_tokens} reused) + "
                f"{generation.completion_tokens} completion tokens in {time.perf_counter() - started:.1f} s "
                f"({generation.finish_reason})"
            )
        message, finish = self._message(generation, opening, forced, tools)
        return {
            "id": f"chatcmpl-lit3r-{self.calls}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.alias,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": {
                "prompt_tokens": generation.prompt_tokens,
                "completion_tokens": generation.completion_tokens,
                "total_tokens": generation.prompt_tokens + generation.completion_tokens,
            },
        }

    @staticmethod
    def _forced_tool(tools: list[dict] | None, choice: Any) -> dict[str, Any] | None:
        """The function a ``tool_choice`` naming one forces (None for 'auto', 'none' or no tools)."""
        if not isinstance(choice, dict):
            return None
        name = (choice.get("function") or {}).get("name")
        for tool in tools or []:
            if tool.get("function", {}).get("name") == name:
                return tool["function"]
        raise ValueError(f"tool_choice names {name!r}, which is not among the tools")

    def _prompt(
        self, messages: list[dict[str, Any]], tools: list[dict] | None, forced: dict[str, Any] | None
    ) -> tuple[str, str]:
        """The rendered prompt and the start of the reply written for the model."""
        if forced is None:
            return self.template.render(messages, tools), ""
        prompt = self.template.render(messages, tools)
        if "<tool_call>" in prompt:  # Qwen / Hermes: the template taught the call syntax; start the call
            return prompt, f'<tool_call>\n{{"name": {json.dumps(forced["name"])}, "arguments": '
        hint = (
            f"Reply with one JSON object, and nothing else, holding the arguments of {forced['name']} and "
            f"validating against this JSON schema:\n{json.dumps(forced.get('parameters', {}))}"
        )
        if messages[0]["role"] == "system":
            messages = [{**messages[0], "content": f"{messages[0]['content']}\n\n{hint}"}, *messages[1:]]
        else:
            messages = [{"role": "system", "content": hint}, *messages]
        return self.template.render(messages, None), ""

    def _message(
        self, generation: Generation, opening: str, forced: dict[str, Any] | None, tools: list[dict] | None
    ) -> tuple[dict[str, Any], str]:
        """The assistant message and finish reason for a generation (``opening``: the JSON written for the model)."""
        text = opening + generation.text
        if forced is not None:
            schema = forced.get("parameters", {})
            read = read_arguments(text, schema)
            if read is not None:
                arguments, problems = read
                if problems:
                    self.log(f"call {self.calls}: {forced['name']} arguments break the schema: {'; '.join(problems)}")
                return self._calls([(forced["name"], arguments)]), "tool_calls"
            self.log(f"call {self.calls}: no JSON object for {forced['name']}: {text[:200]!r}")
            return {"role": "assistant", "content": text}, generation.finish_reason
        if tools:
            calls = []
            for block in HERMES_CALL.findall(text):
                parsed = _loads(block)
                if isinstance(parsed, dict) and isinstance(parsed.get("name"), str):
                    calls.append((parsed["name"], parsed.get("arguments") or {}))
            if calls:
                return self._calls(calls), "tool_calls"
        return {"role": "assistant", "content": text.strip()}, generation.finish_reason

    @staticmethod
    def _calls(calls: list[tuple[str, Any]]) -> dict[str, Any]:
        tool_calls = [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)},
            }
            for n, (name, arguments) in enumerate(calls)
        ]
        return {"role": "assistant", "content": None, "tool_calls": tool_calls}


# --- HTTP ------------------------------------------------------------------------------------------------------


def handler(service: ChatService) -> type[BaseHTTPRequestHandler]:
    """The request handler class serving ``service`` (``/v1/models``, ``/v1/chat/completions``)."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_args: Any) -> None:
            pass

        def _send(self, status: int, document: dict[str, Any]) -> None:
            body = json.dumps(document).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _error(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
            self._send(status, {"error": {"message": message, "type": kind, "code": status}})

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, service.models())
            else:
                self._error(404, f"no route {self.path}")

        def do_POST(self) -> None:
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._error(404, f"no route {self.path}")
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self._error(413, "request body too large")
                return
            try:
                request = json.loads(self.rfile.read(length))
                if not isinstance(request, dict):
                    raise ValueError("the request body must be a JSON object")
                self._send(200, service.complete(request))
            except (ValueError, KeyError, TypeError) as exc:  # JSONDecodeError and ContextOverflow included
                self._error(400, str(exc))

    return Handler


def options(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The ``llama_cpp.server`` options lit3r passes (the ones gpt4all has no use for are accepted and ignored)."""
    parser = argparse.ArgumentParser(prog="python -m lit3r.llm.wheel_server", description=__doc__.split("\n")[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--model_alias")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--n_ctx", type=int, default=4096)
    parser.add_argument("--n_threads", type=int, default=1)
    parser.add_argument("--n_threads_batch", type=int)
    parser.add_argument("--chat_format", help="ignored: the GGUF's own chat template is used")
    parser.add_argument("--cache", help="ignored: the prefix shared with earlier calls is always reused")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    """Load the model, then serve until terminated."""
    args = options(argv)
    if args.host not in LOOPBACK:
        raise SystemExit(f"lit3r's wheel server listens on loopback only, not {args.host}")

    def log(line: str) -> None:
        print(f"lit3r.wheel_server: {line}", file=sys.stderr, flush=True)

    started = time.perf_counter()
    info = model_info(args.model)
    generator = Gpt4AllGenerator(args.model, n_ctx=args.n_ctx, n_threads=args.n_threads, bpe=info.bpe)
    service = ChatService(ChatTemplate(info), generator, args.model_alias or args.model.stem, log)
    server = ThreadingHTTPServer((args.host, args.port), handler(service))
    where = f"{args.host}:{args.port}"
    log(f"{args.model.name} loaded in {time.perf_counter() - started:.1f} s; {args.n_threads} threads; {where}")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
