"""Shorter tool schemas for a small model's small, slowly-read context: first sentences and the bare types."""

from __future__ import annotations

import json
import re
from typing import Any

_SENTENCE_END = re.compile(r"(?<!e\.g\.)(?<!i\.e\.)(?<=[.!?])\s+(?=\S)|\n")
_EXAMPLES = re.compile(r",?\s*\(?\b(?:e\.g\.|for example)")
_DROPPED_KEYS = {
    "title",
    "additionalProperties",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "default",
}


def first_sentence(text: str) -> str:
    """The text up to its first sentence end or line break, without examples (small models copy them)."""
    match = _SENTENCE_END.search(text.strip())
    sentence = text.strip()[: match.start()] if match else text.strip()
    without_examples = _EXAMPLES.split(sentence)[0].rstrip(" ,;:")
    return without_examples if without_examples == sentence else without_examples + "."


def _compact_schema(schema: Any) -> Any:
    if isinstance(schema, list):
        return [_compact_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    options = schema.get("anyOf")
    if isinstance(options, list):
        kept = [option for option in options if option != {"type": "null"}]
        if len(kept) == 1 and isinstance(kept[0], dict):
            merged = {**{k: v for k, v in schema.items() if k != "anyOf"}, **kept[0]}
            return _compact_schema(merged)
    compact: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROPPED_KEYS:
            continue
        if key == "description" and isinstance(value, str):
            compact[key] = first_sentence(value)
        elif key == "properties" and isinstance(value, dict):
            compact[key] = {name: _compact_schema(prop) for name, prop in value.items()}
        else:
            compact[key] = _compact_schema(value)
    return compact


def compact_tool_schemas(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI tool schemas with one-sentence descriptions and no keys a small model does not need."""
    compacted = []
    for tool in tools:
        function = tool.get("function", {})
        compacted.append(
            {
                "type": "function",
                "function": {
                    "name": function.get("name"),
                    "description": first_sentence(function.get("description", "")),
                    "parameters": _compact_schema(function.get("parameters", {})),
                },
            }
        )
    return compacted


def call_schema(tools: list[dict[str, Any]]) -> str:
    """JSON schema (as text) of one call to one of the tools: `{"name": <tool>, "arguments": {...}}`."""
    alternatives = [
        {
            "type": "object",
            "properties": {
                "name": {"const": tool["function"]["name"]},
                "arguments": tool["function"].get("parameters") or {"type": "object"},
            },
            "required": ["name", "arguments"],
        }
        for tool in tools
    ]
    return json.dumps({"anyOf": alternatives})
