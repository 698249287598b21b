"""The wheel server without a model: GGUF metadata, the chat template, prefix reuse, and how requests become
prompts and replies become completions (forced tool calls read from JSON the model was asked for)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.utils.function_calling import convert_to_openai_tool

from lit3r.llm.gguf_template import ChatTemplate, gguf_metadata, model_info
from lit3r.llm.json_reply import array_full, bounded, object_end, read_arguments, scaffold, schema_problems
from lit3r.llm.wheel_runtime import PrefixCache, line_boundaries
from lit3r.llm.wheel_server import ChatService, options
from lit3r.reading.compact_reader import MAX_SUPPORT, CompactReply

from fakes.wheel_model import CHATML_TOOLS, PLAIN_CHATML, ScriptedGenerator, request, write_gguf

COMPACT_TOOL = convert_to_openai_tool(CompactReply)
COMPACT_SCHEMA = COMPACT_TOOL["function"]["parameters"]
FORCED = {"tools": [COMPACT_TOOL], "tool_choice": {"type": "function", "function": {"name": "CompactReply"}}}
MESSAGES = [{"role": "system", "content": "Answer from passages."}, {"role": "user", "content": "[1] BM25 wins."}]
GOOD = {"support": [{"passage": 1, "quote": "BM25 wins."}], "kind": "span", "answer": "BM25"}
OPENING = '{"support": [{"passage":'
"""What the server writes of a CompactReply before the model goes on."""


def rest(value: dict) -> str:
    """What the model writes after :data:`OPENING` for ``value``."""
    text = json.dumps(value)
    assert text.startswith(OPENING)
    return text[len(OPENING) :]


def service(template: str, replies: list[str], tmp_path: Path) -> tuple[ChatService, ScriptedGenerator, list[str]]:
    info = model_info(write_gguf(tmp_path / "m.gguf", template))
    generator, log = ScriptedGenerator(replies), []
    return ChatService(ChatTemplate(info), generator, "qwen-test", log.append), generator, log


# ---------------------------------------------------------------- the GGUF and its template


def test_gguf_metadata_gives_the_template_and_the_special_tokens(tmp_path) -> None:
    path = write_gguf(tmp_path / "m.gguf", CHATML_TOOLS)
    metadata = gguf_metadata(path)
    assert metadata["qwen2.context_length"] == 32768 and metadata["tokenizer.ggml.tokens"][1] == "<|im_start|>"
    info = model_info(path)
    assert info.chat_template == CHATML_TOOLS and info.eos_token == "<|im_end|>" and info.bos_token == "<|endoftext|>"
    assert info.bpe and not model_info(write_gguf(tmp_path / "spm.gguf", CHATML_TOOLS, model="llama")).bpe


def test_a_file_that_is_not_gguf_or_has_no_template_is_refused(tmp_path) -> None:
    (tmp_path / "x.bin").write_bytes(b"PK\x03\x04")
    with pytest.raises(ValueError, match="not a GGUF"):
        gguf_metadata(tmp_path / "x.bin")
    with pytest.raises(ValueError, match="version 1"):
        gguf_metadata(write_gguf(tmp_path / "old.gguf", PLAIN_CHATML, version=1))


def test_the_template_renders_messages_tools_and_message_starts(tmp_path) -> None:
    template = ChatTemplate(model_info(write_gguf(tmp_path / "m.gguf", CHATML_TOOLS)))
    prompt = template.render(MESSAGES, [COMPACT_TOOL])
    assert prompt.startswith("<|im_start|>system\nAnswer from passages.\n# Tools\n<tools>\n{")
    assert prompt.endswith("<|im_start|>user\n[1] BM25 wins.<|im_end|>\n<|im_start|>assistant\n")
    (start,) = template.message_starts(MESSAGES, [COMPACT_TOOL], prompt)
    assert prompt[start:].startswith("<|im_start|>user\n")


# ---------------------------------------------------------------- prefix reuse


def test_line_boundaries_follow_whole_newline_runs() -> None:
    text = "a\nb\n\nc \n  d\n"
    assert line_boundaries(text, len(text)) == [2, 5]  # not inside "\n\n", not before indentation or at the end
    assert line_boundaries(text, 4) == [2]


def test_the_prefix_cache_reuses_message_pieces_then_the_shared_lines() -> None:
    cache = PrefixCache(bpe=True)
    system, fixed = "<s>system\nRules.</s>\n", "<s>user\nInstructions.\nExamples.\n"
    first = system + fixed + "Question: one?</s>\n"
    kept, past, spans = cache.plan(first, [len(system)])
    assert (kept, past) == (0, 0) and spans == [(0, len(system)), (len(system), len(first))]
    cache.keep(kept, [(first[a:b], b - a) for a, b in spans])  # a token per character, for the test
    second = system + fixed + "Question: two?</s>\n"
    kept, past, spans = cache.plan(second, [len(system)])
    cut = len(system + fixed)  # the last line boundary the two prompts share
    assert (kept, past) == (1, len(system)) and spans == [(len(system), cut), (cut, len(second))]
    cache.keep(kept, [(second[a:b], b - a) for a, b in spans])
    third = system + fixed + "Question: three?</s>\n"
    kept, past, spans = cache.plan(third, [len(system)])
    assert (kept, past) == (2, cut) and spans == [(cut, len(third))]  # only the question is evaluated now


def test_without_a_bpe_tokenizer_only_message_pieces_are_reused() -> None:
    cache = PrefixCache(bpe=False)
    cache.keep(0, [("sys\n", 4), ("user\nfixed\nq1\n", 14)])
    assert cache.plan("sys\nuser\nfixed\nq2\n", [4]) == (1, 4, [(4, 18)])
    assert cache.plan("other\n", []) == (0, 0, [(0, 6)])


# ---------------------------------------------------------------- JSON read back against the schema


def test_object_end_finds_the_first_complete_object_outside_strings() -> None:
    assert object_end('{"a": "}{", "b": {"c": 1}} tail') == 26
    assert object_end('{"a": "\\"}"') is None and object_end("no object") is None


def test_schema_problems_and_bounds_follow_the_compact_schema() -> None:
    assert schema_problems(GOOD, COMPACT_SCHEMA) == []
    bad = {"support": [{"passage": "two"}], "kind": "maybe"}
    problems = schema_problems(bad, COMPACT_SCHEMA)
    assert "(root): 'answer' is missing" in problems and any(p.startswith("kind: 'maybe'") for p in problems)
    assert "support[0]: 'quote' is missing" in problems and "support[0].passage: expected integer, got str" in problems
    long = {**GOOD, "support": GOOD["support"] * 5, "answer": "x" * 1000}
    cut = bounded(long, COMPACT_SCHEMA)
    assert (
        len(cut["support"]) == MAX_SUPPORT and len(cut["answer"]) == COMPACT_SCHEMA["properties"]["answer"]["maxLength"]
    )


def test_the_scaffold_opens_the_first_property_down_to_a_value() -> None:
    assert scaffold(COMPACT_SCHEMA) == OPENING
    city = {"type": "object", "properties": {"name": {"type": "string"}, "country": {"type": "string"}}}
    assert scaffold(city) == '{"name":'
    nested = {"type": "object", "properties": {"where": {"$ref": "#/$defs/Place"}}, "$defs": {"Place": city}}
    assert scaffold(nested) == '{"where": {"name":' and scaffold({"type": "object"}) == "{"


def test_read_arguments_takes_the_object_and_says_what_breaks_the_schema() -> None:
    value, problems = read_arguments(json.dumps(GOOD) + "}\n</tool_call>", COMPACT_SCHEMA)
    assert value == GOOD and problems == []
    value, problems = read_arguments('Sure: {"kind": "yes"}', COMPACT_SCHEMA)
    assert value == {"kind": "yes"} and "(root): 'support' is missing" in problems
    assert read_arguments("I cannot answer that.", COMPACT_SCHEMA) is None
    assert read_arguments('{"support": [', COMPACT_SCHEMA) is None


# ---------------------------------------------------------------- requests and completions


def test_a_forced_tool_call_is_started_for_the_model_and_read_back(tmp_path) -> None:
    reply = rest(GOOD) + "}\n</tool_call>\nMore text the model would have gone on with."
    chat, generator, log = service(CHATML_TOOLS, [reply], tmp_path)
    completion = chat.complete(request(MESSAGES, **FORCED))
    (prompt,) = generator.prompts
    assert prompt.endswith('<|im_start|>assistant\n<tool_call>\n{"name": "CompactReply", "arguments": ' + OPENING)
    assert '"name": "CompactReply"' in prompt.split("<tools>")[1]  # the tool schema is shown in the system message
    choice = completion["choices"][0]
    assert choice["finish_reason"] == "tool_calls" and choice["message"]["content"] is None
    (call,) = choice["message"]["tool_calls"]
    assert call["function"]["name"] == "CompactReply" and json.loads(call["function"]["arguments"]) == GOOD
    assert completion["usage"]["completion_tokens"] == len(rest(GOOD))  # generation stopped at the object's end
    assert completion["model"] == "qwen-test" and "breaks the schema" not in " ".join(log)


def test_a_forced_call_that_breaks_the_schema_is_still_a_call_and_is_logged(tmp_path) -> None:
    chat, _, log = service(CHATML_TOOLS, [' "two", "quote": "BM25 wins."}], "kind": "span"}'], tmp_path)
    choice = chat.complete(request(MESSAGES, **FORCED))["choices"][0]
    assert json.loads(choice["message"]["tool_calls"][0]["function"]["arguments"])["support"][0]["passage"] == "two"
    assert any("'answer' is missing" in line and "expected integer" in line for line in log)


def test_an_array_at_its_max_items_is_closed_for_the_model_which_goes_on(tmp_path) -> None:
    item = ' {"passage": 1, "quote": "BM25 wins."}'
    run_on = OPENING + rest({"support": [{"passage": 1, "quote": "BM25 wins."}]})[: -len("}]}")] + "}"
    run_on += ("," + item) * MAX_SUPPORT  # item after item: one more than the schema allows, and more
    assert list(COMPACT_SCHEMA["properties"]) == COMPACT_SCHEMA["required"] == ["support", "kind", "answer"]
    assert array_full(run_on, COMPACT_SCHEMA) == (  # the comma opening one item too many; then "kind" is next
        len(OPENING + rest(GOOD).split("}]")[0]) + 1 + len(("," + item) * (MAX_SUPPORT - 1)),
        '], "kind":',
    )
    assert array_full(OPENING + rest(GOOD), COMPACT_SCHEMA) is None  # within bounds
    assert array_full('{"answer": "a, b, c, d, e"', COMPACT_SCHEMA) is None  # commas inside a string
    chat, generator, log = service(CHATML_TOOLS, [run_on[len(OPENING) :], ' "span", "answer": "BM25"}'], tmp_path)
    completion = chat.complete(request(MESSAGES, **FORCED))
    arguments = json.loads(completion["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"])
    assert len(arguments["support"]) == MAX_SUPPORT and arguments["answer"] == "BM25" and arguments["kind"] == "span"
    first, second = generator.prompts
    assert second.startswith(first) and second.endswith('}], "kind":')  # the model goes on after the array
    assert any("maxItems; " in line and "written for the model" in line for line in log)


def test_a_forced_call_without_json_comes_back_as_text(tmp_path) -> None:
    chat, _, log = service(CHATML_TOOLS, [" The answer is BM25."], tmp_path)
    choice = chat.complete(request(MESSAGES, **FORCED))["choices"][0]
    assert choice["message"] == {"role": "assistant", "content": OPENING + " The answer is BM25."}
    assert choice["finish_reason"] == "stop" and any("no JSON object" in line for line in log)


def test_a_template_without_tool_syntax_gets_the_schema_in_the_system_message(tmp_path) -> None:
    chat, generator, _ = service(PLAIN_CHATML, [rest(GOOD)], tmp_path)
    choice = chat.complete(request(MESSAGES, **FORCED))["choices"][0]
    assert json.loads(choice["message"]["tool_calls"][0]["function"]["arguments"]) == GOOD
    system = generator.prompts[0].split("<|im_end|>")[0]
    assert system.startswith("<|im_start|>system\nAnswer from passages.\n\nReply with one JSON object")
    assert '"kind"' in system and generator.prompts[0].endswith("<|im_start|>assistant\n" + OPENING)


def test_plain_chat_is_text_with_usage_and_the_message_starts_as_boundaries(tmp_path) -> None:
    chat, generator, _ = service(CHATML_TOOLS, ["  Hello there.  "], tmp_path)
    completion = chat.complete(request([*MESSAGES, {"role": "assistant", "content": "Hi"}, MESSAGES[1]]))
    assert completion["choices"][0]["message"] == {"role": "assistant", "content": "Hello there."}
    assert completion["usage"]["prompt_tokens"] == len(generator.prompts[0].split())
    prompt, starts = generator.prompts[0], generator.boundaries[0]
    assert len(starts) == 3 and all(prompt[s:].startswith("<|im_start|>") for s in starts)


def test_max_tokens_cuts_the_reply_and_says_length(tmp_path) -> None:
    chat, _, _ = service(CHATML_TOOLS, ["a long answer"], tmp_path)
    choice = chat.complete(request(MESSAGES, max_tokens=4))["choices"][0]
    assert choice["message"]["content"] == "a lo" and choice["finish_reason"] == "length"


def test_a_free_tool_choice_reads_the_template_tool_call_blocks(tmp_path) -> None:
    reply = 'Let me search.\n<tool_call>\n{"name": "search", "arguments": {"query": "bm25"}}\n</tool_call>'
    chat, _, _ = service(CHATML_TOOLS, [reply, "No call here."], tmp_path)
    tools = [{"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}]
    choice = chat.complete(request(MESSAGES, tools=tools, tool_choice="auto"))["choices"][0]
    (call,) = choice["message"]["tool_calls"]
    assert call["function"] == {"name": "search", "arguments": '{"query": "bm25"}'}
    assert chat.complete(request(MESSAGES, tools=tools))["choices"][0]["message"]["content"] == "No call here."


def test_requests_it_cannot_serve_are_refused(tmp_path) -> None:
    chat, _, _ = service(CHATML_TOOLS, [], tmp_path)
    with pytest.raises(ValueError, match="streaming"):
        chat.complete(request(MESSAGES, stream=True))
    with pytest.raises(ValueError, match="not among the tools"):
        chat.complete(request(MESSAGES, tools=[], tool_choice={"type": "function", "function": {"name": "X"}}))
    with pytest.raises(ValueError, match="empty"):
        chat.complete(request([]))


def test_the_options_are_llama_cpp_servers_and_only_loopback_is_served(tmp_path) -> None:
    from lit3r.llm import wheel_server
    from lit3r.llm.local_server import server_arguments
    from lit3r.settings.llm import LocalSettings

    model = write_gguf(tmp_path / "m.gguf", CHATML_TOOLS)
    parsed = options(server_arguments(model, 8123, "alias", LocalSettings(n_threads=3, cache=True)))
    assert (parsed.model, parsed.port, parsed.model_alias, parsed.n_threads, parsed.n_ctx) == (
        model,
        8123,
        "alias",
        3,
        8192,
    )
    with pytest.raises(SystemExit, match="loopback only"):
        wheel_server.main(["--model", str(model), "--host", "0.0.0.0", "--port", "8123"])
