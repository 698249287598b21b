"""An OpenAI-compatible chat server over gpt4all's prebuilt llama.cpp: the local reader without compiling.

llama-cpp-python is an sdist (installing it compiles llama.cpp, 15-30 minutes on 2 cores); ``gpt4all`` ships a
manylinux wheel with llama.cpp inside that runs the same GGUF files. ``python -m lit3r.llm.wheel_server`` takes
the options :func:`lit3r.llm.local_server.server_arguments` gives ``llama_cpp.server`` (``--model``,
``--model_alias``, ``--host``, ``--port``, ``--n_ctx``, ``--n_threads``, ...), so :class:`LocalServer` starts
either one unchanged. It listens on loopback only, answers ``GET /v1/models`` once the model is loaded, and
``POST /v1/chat/completions`` one request at a time (no streaming).

What it does like llama-cpp-python's server with the GGUF's own chat template: the prompt is that template
(``tokenizer.chat_template``, rendered with jinja2 as llama-cpp-python and transformers render it, tools
included); temperature 0 is greedy decoding, without the repeat penalty llama-cpp-python's server applies
(:data:`~lit3r.llm.wheel_runtime.REPEAT_PENALTY`); the
prefix a call shares with the earlier ones is not evaluated again (:class:`~lit3r.llm.wheel_runtime.PrefixCache`).
The GGUF's template is read by :mod:`lit3r.llm.gguf_template`, the JSON by :mod:`lit3r.llm.json_reply`, the model
run by :mod:`lit3r.llm.wheel_runtime`; this module is the OpenAI protocol and the HTTP server.

What differs from llama.cpp's grammar: gpt4all cannot constrain sampling, so a *forced* tool call
(``tool_choice`` naming a function) is asked for, not enforced. The reply is started for the model in the
template's own tool-call syntax (``<tool_call>\\n{"name": ..., "arguments": `` for Qwen/Hermes templates; else
the schema is spelled out in the system message) and the arguments' first key (``scaffold``: a grammar forces
it; left alone, a 1.5B model copied the schema instead of filling it); generation stops where the JSON object
closes; :func:`~lit3r.llm.json_reply.read_arguments` parses it and applies the bounds the grammar would have
enforced (``maxItems``, ``maxLength``: longer arrays and strings are cut). A reply that parses comes back as a
tool call, whether or not it validates (what ``schema_problems`` finds goes to the server's log; the client
validates with its own, more lenient, pydantic model and spends its one repair call); a reply that does not
parse comes back as text, which the client's structured-output repair handles like any unusable reply. With
``tool_choice`` 'auto' the template's ``<tool_call>`` blocks in the reply become tool calls.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from lit3r.llm.gguf_template import ChatTemplate, model_info
from lit3r.llm.json_reply import array_full, object_end, read_arguments, scaffold
from lit3r.llm.wheel_runtime import Generation, Generator, Gpt4AllGenerator

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
DEFAULT_MAX_TOKENS = 512
HERMES_CALL = re.compile(r"<tool_call>\s*(\{.*?\})\s*</tool_call>", re.DOTALL)
MAX_BODY = 8 << 20


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
        schema = forced.get("parameters", {}) if forced is not None else None
        with self.lock:
            started = time.perf_counter()
            generation = self._generate(prompt + prefill, opening, schema, wants_object, max_tokens, temperature,
                                        boundaries)  # fmt: skip
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

    def _generate(
        self,
        prompt: str,
        opening: str,
        schema: dict[str, Any] | None,
        wants_object: bool,
        max_tokens: int,
        temperature: float,
        boundaries: Sequence[int],
    ) -> Generation:
        """The reply after ``prompt + opening``: generation stops where the JSON object closes (``wants_object``),
        and, for a forced call's ``schema``, where an array would take an item past its ``maxItems``
        (:func:`~lit3r.llm.json_reply.array_full`): there the array is closed for the model, with the object's next
        required key, and it goes on, as a grammar allows nothing else. At most ``max_tokens`` generated in all."""
        written, prompt_tokens, completion_tokens, reused = "", 0, 0, None
        while True:
            head = opening + written

            def stop(text: str, head: str = head) -> bool:
                if object_end(head + text) is not None:
                    return True
                return schema is not None and "," in text[-4:] and array_full(head + text, schema) is not None

            generation = self.generator.generate(
                prompt + head,
                max_tokens=max_tokens - completion_tokens,
                temperature=temperature,
                boundaries=boundaries,
                stop=stop if wants_object else None,
            )
            reused = generation.reused_tokens if reused is None else reused
            prompt_tokens += (
                generation.prompt_tokens if not written else generation.prompt_tokens - generation.reused_tokens
            )
            completion_tokens += generation.completion_tokens
            text = head + generation.text
            full = array_full(text, schema) if schema is not None else None
            if full is None or completion_tokens >= max_tokens:
                written = text[len(opening) :]
                break
            cut, closing = full
            written = text[len(opening) : cut] + closing
            self.log(f"call {self.calls + 1}: an array reached its maxItems; {closing!r} written for the model")
        finish = generation.finish_reason
        return Generation(written, prompt_tokens, completion_tokens, finish, reused_tokens=reused or 0)

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
