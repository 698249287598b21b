"""A stand-in for the ``gpt4all`` package: the part of its binding the wheel server uses, one token a character.

``GPT4All(name, model_path=..., allow_download=False, device="cpu")`` checks the file is there; its ``model``
keeps a context (``context.n_past`` characters of the text evaluated so far) and ``prompt_model`` evaluates a
prompt after ``n_past`` (calling ``_prompt_callback`` per character), then writes up to ``n_predict`` characters
of a reply: the rest of a CompactReply-shaped JSON object when the context mentions ``CompactReply``, else
"You said: " and the last user line. Each call appends ``{"n_past": ..., "evaluated": ...}`` to ``$FAKE_GPT4ALL_LOG``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

ANSWER = {"support": [{"passage": 1, "quote": "BM25 wins."}], "kind": "span", "answer": "BM25"}


class _Context:
    n_past = 0


class LLModel:
    def __init__(self) -> None:
        self.context: _Context | None = None
        self.text = ""
        self.threads = 0

    def set_thread_count(self, n: int) -> None:
        self.threads = n

    def _set_context(self, reset_context: bool = False, **_params) -> None:
        if self.context is None:
            self.context = _Context()
        if reset_context:
            self.context.n_past = 0

    @staticmethod
    def _prompt_callback(_token: int) -> bool:
        return True

    def prompt_model(self, prompt, template, callback, n_predict=128, special=False, **params) -> None:
        assert template == "%1%2" and special and params["temp"] == 0.0 and params["top_k"] == 1
        self._set_context()
        assert self.context.n_past <= len(self.text), "n_past beyond the evaluated text"
        self.text = self.text[: self.context.n_past]
        for char in prompt:
            self._prompt_callback(ord(char))
        self.text += prompt
        self.context.n_past = len(self.text)
        if log := os.environ.get("FAKE_GPT4ALL_LOG"):
            with open(log, "a", encoding="utf-8") as handle:
                handle.write(json.dumps({"n_past": self.context.n_past - len(prompt), "evaluated": len(prompt)}) + "\n")
        if not n_predict:
            return
        if "CompactReply" in self.text:  # the reply goes on from the part of it the server wrote
            whole = json.dumps(ANSWER) + "}\n</tool_call>"
            reply = whole[next(k for k in range(len(whole), -1, -1) if self.text.endswith(whole[:k])) :]
        else:
            user = self.text.rsplit("<|im_start|>user\n", 1)[-1].split("<|im_end|>")[0]
            reply = f"You said: {user}"
        for n, char in enumerate(reply[:n_predict]):
            self.text += char
            self.context.n_past += 1
            if not callback(n, char):
                return


class GPT4All:
    def __init__(self, model_name, *, model_path, allow_download=True, device=None, n_ctx=2048, verbose=False):
        assert not allow_download and device == "cpu"
        if not (Path(model_path) / model_name).is_file():
            raise ValueError(f"no model file {model_name} in {model_path}")
        self.model = LLModel()
