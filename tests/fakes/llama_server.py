"""A stand-in for ``python -m llama_cpp.server``: takes the same options, speaks a little of its API.

Run as a script by the local-profile tests. ``FAKE_LLAMA_MODE`` picks the behaviour:

* ``serve`` (default): answer ``GET /v1/models`` and ``POST /v1/chat/completions``. A request forcing a tool
  (``tool_choice`` naming a function) gets a call of that tool with the JSON in ``FAKE_LLAMA_ARGS``; any
  other request gets the text ``FAKE_LLAMA_TEXT``. Each request body is appended to ``FAKE_LLAMA_REQUESTS``.
* ``exit``: print an error and exit with code 3 at once, like a server that cannot load its model.
* ``silent``: never listen, like a server stuck loading a model.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer


def options() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    for name in ("--model", "--model_alias", "--host", "--n_ctx", "--n_threads", "--n_threads_batch"):
        parser.add_argument(name)
    parser.add_argument("--chat_format")
    parser.add_argument("--cache")
    parser.add_argument("--port", type=int, required=True)
    return parser.parse_args()


def completion(alias: str, message: dict, finish_reason: str) -> dict:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": alias,
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16},
    }


def handler(alias: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_args) -> None:
            pass

        def send_json(self, document: dict) -> None:
            body = json.dumps(document).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            if self.path != "/v1/models":
                self.send_error(404)
                return
            self.send_json({"object": "list", "data": [{"id": alias, "object": "model", "owned_by": "me"}]})

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
            if log := os.environ.get("FAKE_LLAMA_REQUESTS"):
                with open(log, "a", encoding="utf-8") as handle:
                    handle.write(json.dumps(request) + "\n")
            choice = request.get("tool_choice")
            if isinstance(choice, dict):
                arguments = os.environ.get("FAKE_LLAMA_ARGS", "{}")
                call = {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": choice["function"]["name"], "arguments": arguments},
                }
                message = {"role": "assistant", "content": None, "tool_calls": [call]}
                self.send_json(completion(alias, message, "tool_calls"))
                return
            message = {"role": "assistant", "content": os.environ.get("FAKE_LLAMA_TEXT", "fake answer")}
            self.send_json(completion(alias, message, "stop"))

    return Handler


def main() -> None:
    args = options()
    mode = os.environ.get("FAKE_LLAMA_MODE", "serve")
    print(f"fake llama server: mode {mode}, model {args.model}", flush=True)
    if mode == "exit":
        print("error: failed to load model", flush=True)
        sys.exit(3)
    if mode == "silent":
        time.sleep(600)
        return
    HTTPServer((args.host, args.port), handler(args.model_alias)).serve_forever()


if __name__ == "__main__":
    main()
