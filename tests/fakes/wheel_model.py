"""Stand-ins for the wheel server's model: a small ChatML template with tools, a GGUF header, a scripted generator.

:data:`CHATML_TOOLS` renders like Qwen2.5's template (tools listed in the system message with the
``<tool_call>`` syntax); :func:`write_gguf` writes a GGUF file holding only metadata; :class:`ScriptedGenerator`
answers each prompt with the next scripted reply, token by token (one character each), honouring ``stop`` and
``max_tokens`` as the real generator does, and keeps the prompts it was given.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lit3r.llm.wheel_runtime import Generation

CHATML_TOOLS = """{%- if tools %}<|im_start|>system
{% if messages[0]['role'] == 'system' %}{{ messages[0]['content'] }}{% else %}You are helpful.{% endif %}

# Tools
<tools>
{% for tool in tools %}{{ tool | tojson }}
{% endfor %}</tools>
Return calls as <tool_call>{"name": <function-name>, "arguments": <args-json-object>}</tool_call><|im_end|>
{% elif messages[0]['role'] == 'system' %}<|im_start|>system
{{ messages[0]['content'] }}<|im_end|>
{% endif %}
{%- for message in messages %}{% if message['role'] != 'system' %}<|im_start|>{{ message['role'] }}
{{ message['content'] }}<|im_end|>
{% endif %}{% endfor %}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""
"""A ChatML template with Qwen's tool block (the real one is longer; this keeps its shape)."""

PLAIN_CHATML = """{% for message in messages %}<|im_start|>{{ message['role'] }}
{{ message['content'] }}<|im_end|>
{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""
"""A ChatML template that knows no tools (the wheel server then spells the schema out)."""


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def write_gguf(path: Path, template: str, *, model: str = "gpt2", version: int = 3) -> Path:
    """A GGUF file with no tensors and the metadata the wheel server reads (tokens, EOS, template)."""
    entries = [
        _string("general.architecture") + struct.pack("<I", 8) + _string("qwen2"),
        _string("tokenizer.ggml.model") + struct.pack("<I", 8) + _string(model),
        _string("tokenizer.ggml.tokens")
        + struct.pack("<IIQ", 9, 8, 3)
        + b"".join(_string(t) for t in ("<|endoftext|>", "<|im_start|>", "<|im_end|>")),
        _string("tokenizer.ggml.bos_token_id") + struct.pack("<II", 4, 0),
        _string("tokenizer.ggml.eos_token_id") + struct.pack("<II", 4, 2),
        _string("qwen2.context_length") + struct.pack("<IQ", 10, 32768),
        _string("tokenizer.chat_template") + struct.pack("<I", 8) + _string(template),
    ]
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", version, 0, len(entries)) + b"".join(entries))
    return path


class ScriptedGenerator:
    """Answers each call with the next reply; a prompt token is a whitespace-separated word, a completion token
    one character."""

    def __init__(self, replies: Sequence[str]) -> None:
        self.replies = list(replies)
        self.prompts: list[str] = []
        self.boundaries: list[list[int]] = []

    def generate(
        self,
        prompt: str,
        *,
        max_tokens: int,
        temperature: float,
        boundaries: Sequence[int] = (),
        stop: Callable[[str], bool] | None = None,
    ) -> Generation:
        self.prompts.append(prompt)
        self.boundaries.append(list(boundaries))
        reply = self.replies.pop(0)
        out = ""
        for char in reply[:max_tokens]:
            out += char
            if stop is not None and stop(out):
                return Generation(out, len(prompt.split()), len(out), "stop")
        finish = "length" if len(reply) > max_tokens else "stop"
        return Generation(out, len(prompt.split()), len(out), finish)


def request(messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A chat-completions request body as langchain-openai sends it."""
    return {"model": "m", "messages": messages, "temperature": 0.0, "max_tokens": 512, **extra}
