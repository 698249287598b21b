"""A JSON object read back from a model that no grammar constrained: where it ends, the start written for the
model, the schema's bounds applied, and what in it breaks the schema.

:func:`scaffold` is the start of the object the server writes before the model goes on (the first key down to
its value: a grammar forces those characters); :func:`object_end` finds where the object closes, so generation
stops there; :func:`array_full` finds where an array would take an item past the schema's ``maxItems``, so the
server closes the array there and lets the model go on (a grammar allows only ``]`` at that point);
:func:`read_arguments` parses it and cuts it to the schema's ``maxItems``/``maxLength``
(:func:`bounded`: what a grammar would not have let through); :func:`schema_problems` lists what still breaks
the schema (types, enums, required properties, array sizes, ``anyOf``; local ``$ref`` followed).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any


def _outside_strings(text: str) -> Iterator[tuple[int, str, int]]:
    """``(offset, character, start)`` for each character of ``text`` outside JSON strings, and for each string at
    its closing quote (``character`` ``"``, ``start`` its opening quote's offset; elsewhere ``start`` is the
    offset): what a scanner of JSON's structure reads, escapes inside strings handled."""
    in_string, escaped, start = False, False, 0
    for i, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
                yield i, char, start
        elif char == '"':
            in_string, start = True, i
        else:
            yield i, char, i


def object_end(text: str) -> int | None:
    """The offset just after the first complete JSON object in ``text`` (None while it is still open)."""
    depth = 0
    for i, char, _ in _outside_strings(text):
        if char == "{":
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                return i + 1
    return None


def array_full(text: str, schema: dict[str, Any]) -> tuple[int, str] | None:
    """Where ``text`` (a JSON object being written for ``schema``) would open one item more than an array's
    ``maxItems`` allows, and what a grammar would write there: ``(offset of that comma, closing)``, the closing
    being ``]`` and, when the array is an object's property followed by a required one, that property's key
    (``], "verdict":``); None while no array runs over (or ``text`` strays from JSON).

    A small model left unconstrained can list item after item until its token budget runs out (naming every
    sentence of an abstract as "contradicts"); under a grammar the only way on after the last allowed item is
    ``]`` and then the object's next required property. Cutting ``text`` before this comma and writing the
    closing does the same."""
    stack: list[dict[str, Any]] = []  # one frame per open container: its schema, items so far or the current key
    value_schema: dict[str, Any] | None = schema
    for i, char, start in _outside_strings(text):
        if char == '"':  # a string closed: an object's key when one is expected
            frame = stack[-1] if stack else None
            if frame is not None and frame["kind"] == "object" and frame["expect"] == "key":
                try:
                    frame["key"] = json.loads(text[start : i + 1])
                except json.JSONDecodeError:
                    return None
        elif char in "{[":
            current = _resolve(value_schema or {}, schema)
            kind = "object" if char == "{" else "array"
            stack.append({"kind": kind, "schema": current, "items": 1, "expect": "key", "key": None})
            value_schema = _resolve(current.get("items") or {}, schema) if kind == "array" else None
        elif char in "}]":
            if not stack:
                return None
            stack.pop()
            value_schema = None
        elif char == ":" and stack and stack[-1]["kind"] == "object":
            frame = stack[-1]
            frame["expect"] = "value"
            value_schema = (frame["schema"].get("properties") or {}).get(frame["key"]) or {}
        elif char == "," and stack:
            frame = stack[-1]
            if frame["kind"] == "object":
                frame["expect"], value_schema = "key", None
                continue
            limit = frame["schema"].get("maxItems")
            if isinstance(limit, int) and frame["items"] >= limit:
                return i, "]" + _next_key(stack[-2] if len(stack) > 1 else None)
            frame["items"] += 1
            value_schema = _resolve(frame["schema"].get("items") or {}, schema)
    return None


def _next_key(frame: dict[str, Any] | None) -> str:
    """``, "key":`` for the required property after the one an object ``frame`` is writing; empty when none."""
    if frame is None or frame["kind"] != "object":
        return ""
    names = list(frame["schema"].get("properties") or {})
    required = set(frame["schema"].get("required") or ())
    later = names[names.index(frame["key"]) + 1 :] if frame["key"] in names else []
    following = next((name for name in later if name in required), None)
    return f", {json.dumps(following)}:" if following else ""


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
