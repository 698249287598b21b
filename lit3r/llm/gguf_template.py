"""A GGUF file's chat template, read without llama.cpp: the metadata at the head of the file, rendered with jinja2.

:func:`gguf_metadata` reads the key-value section of a GGUF (version 2 or 3); :class:`ChatTemplate` renders its
``tokenizer.chat_template`` as llama-cpp-python's ``Jinja2ChatFormatter`` and transformers do (sandboxed,
``trim_blocks``/``lstrip_blocks``, ``tojson``, tools and ``add_generation_prompt`` passed), so a prompt built here
is the one llama.cpp's server would evaluate for the same messages.
"""

from __future__ import annotations

import json
import struct
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

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
