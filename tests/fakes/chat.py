"""A scripted chat model that can call tools, for LLM wrapper tests and LangGraph graph tests.

Each model call takes the next item of the script:

* ``str``: a text reply;
* ``tool_call(...)`` (a dict) or a list of them: an AI message with those tool calls;
* an ``AIMessage``: returned as is;
* an exception instance: raised (to script endpoint failures);
* a callable ``(messages) -> item``: computed from the prompt, then treated like the items above.

``bind_tools`` binds OpenAI-format tool schemas like a real provider does; a scripted tool call naming a tool
that was not bound raises, so a graph test catches a misspelt tool name. Every call is kept in
:attr:`FakeToolCallingModel.calls` (messages and call keyword arguments such as ``tools``, ``tool_choice``,
``response_format``). Replies without usage get word-count usage, so token accounting can be tested.

    model = FakeToolCallingModel(script=[tool_call("search_chunks", query="bm25"), "Final answer [1]."])
    graph = build_graph(model.bind_tools(TOOLS))
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, ToolCall
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field, PrivateAttr

ScriptItem = str | dict[str, Any] | list[dict[str, Any]] | AIMessage | BaseException | Callable[..., Any]


def tool_call(name: str, call_id: str | None = None, **args: Any) -> ToolCall:
    """A scripted tool call; the id is filled in at reply time when not given."""
    return ToolCall(name=name, args=args, id=call_id, type="tool_call")


def _words(text: str) -> int:
    """A stand-in token count: white-space separated words."""
    return len(text.split())


def _usage(prompt: Sequence[BaseMessage], reply: AIMessage) -> dict[str, int]:
    """Word-count usage metadata for a reply to ``prompt``."""
    prompt_tokens = sum(_words(m.text) for m in prompt)
    completion_tokens = _words(reply.text) + sum(_words(json.dumps(c["args"])) for c in reply.tool_calls)
    return {
        "input_tokens": prompt_tokens,
        "output_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


class ScriptExhausted(AssertionError):
    """The model was called more often than the script has replies."""


class FakeToolCallingModel(BaseChatModel):
    """Replies from a finite script; see the module docstring for what a script item can be."""

    script: list[Any] = Field(default_factory=list, description="Replies, one per call, in order.")
    calls: list[dict[str, Any]] = Field(default_factory=list, description="Each call's messages and kwargs.")
    position: int = Field(default=0, description="Index of the next script item.")
    count_tokens: bool = Field(default=True, description="Attach word-count usage to replies that have none.")
    model_name: str = Field(default="fake-tool-calling", description="Name reported in call records.")
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "fake-tool-calling"

    @property
    def remaining(self) -> int:
        """Script items not yet used."""
        return len(self.script) - self.position

    def bind_tools(
        self, tools: Sequence[Any], *, tool_choice: str | None = None, **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools (pydantic classes, functions, langchain tools or dicts) in OpenAI format."""
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        if tool_choice is not None:
            kwargs["tool_choice"] = tool_choice
        return self.bind(tools=formatted, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """Take the next script item and turn it into a reply (or raise it)."""
        with self._lock:  # graph tests may call from several threads
            self.calls.append({"messages": list(messages), "kwargs": kwargs})
            if self.position >= len(self.script):
                raise ScriptExhausted(f"fake model called {len(self.calls)} times; the script has {len(self.script)}")
            item = self.script[self.position]
            self.position += 1
        if callable(item):
            item = item(messages)
        if isinstance(item, BaseException):
            raise item
        reply = self._to_message(item)
        self._check_tools(reply, kwargs.get("tools"))
        if self.count_tokens and reply.usage_metadata is None:
            reply = reply.model_copy(update={"usage_metadata": _usage(messages, reply)})
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _to_message(self, item: ScriptItem) -> AIMessage:
        """An ``AIMessage`` for a text, tool-call or message script item, tool-call ids filled in."""
        if isinstance(item, AIMessage):
            return item
        if isinstance(item, str):
            return AIMessage(content=item, id=f"fake-{self.position}")
        calls = [item] if isinstance(item, dict) else list(item)
        filled = [
            ToolCall(name=c["name"], args=c.get("args", {}), id=c.get("id") or f"call_{self.position}_{i}")
            for i, c in enumerate(calls)
        ]
        return AIMessage(content="", tool_calls=filled, id=f"fake-{self.position}")

    @staticmethod
    def _check_tools(reply: AIMessage, tools: list[dict[str, Any]] | None) -> None:
        """Refuse a scripted tool call to a tool that was not bound (when tools were bound at all)."""
        if not tools:
            return
        bound = {t["function"]["name"] for t in tools}
        for call in reply.tool_calls:
            if call["name"] not in bound:
                raise ValueError(f"scripted tool call {call['name']!r} is not among the bound tools {sorted(bound)}")
