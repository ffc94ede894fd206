"""The tool registry: schemas derived from each tool's Args model, and one place that turns calls into results."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any

from pydantic import ValidationError

from keel.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult


def _strip_titles(schema: Any) -> Any:
    """Pydantic adds `title` everywhere; models do not need it and it costs tokens."""
    if isinstance(schema, dict):
        return {k: _strip_titles(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


def _inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """Nested models' `$ref`s replaced by their definitions: not every server or model follows a `$ref`."""
    definitions = schema.get("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            if ref.startswith("#/$defs/"):
                return inline(definitions[ref.removeprefix("#/$defs/")])
            return {k: inline(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    return inline(schema)  # type: ignore[no-any-return]


@cache
def schema_of(tool: type[Tool[Any]]) -> dict[str, Any]:
    """The OpenAI function-calling schema of a tool, derived from its Args model once per process (read-only)."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": _strip_titles(_inline_refs(tool.Args.model_json_schema())),
        },
    }


def _schema(tool: Tool[Any]) -> dict[str, Any]:
    """A tool's schema: from its Args model, or as given (an MCP server's, whose `title`s are its own)."""
    if tool.parameters is None:
        return schema_of(type(tool))
    function = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    return {"type": "function", "function": function}


def _describe_validation(error: ValidationError) -> str:
    problems = []
    for item in error.errors():
        where = ".".join(str(p) for p in item["loc"]) or "arguments"
        problems.append(f"{where}: {item['msg']}")
    return "; ".join(problems)


def parse_arguments(raw: str | dict[str, Any] | None) -> dict[str, Any]:
    """Decode the arguments a model sent, tolerating the ways models get JSON slightly wrong."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ToolError(
            f"the arguments are not valid JSON ({exc.msg} at position {exc.pos}); "
            'send one JSON object, for example {"path": "README.md"}'
        ) from None
    except RecursionError:
        raise ToolError("the arguments are nested too deeply; send one flat JSON object") from None
    if isinstance(value, str):  # arguments double-encoded as a JSON string
        return parse_arguments(value)
    try:  # a lone surrogate comes from a \u escape or from the text itself (then not ASCII)
        if "\\u" in raw or not raw.isascii():
            json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolError(
            f"the arguments hold a lone UTF-16 surrogate ({exc.object[exc.start : exc.end]!a}), which is "
            "not text; send valid Unicode (or escape the character another way)"
        ) from None
    if not isinstance(value, dict):
        raise ToolError(f"the arguments must be a JSON object, not {type(value).__name__}")
    return value


class ToolRegistry:
    """The tools of one session, by name."""

    def __init__(self, tools: list[Tool[Any]], redact: Callable[[str], str] | None = None) -> None:
        """`redact` masks known secrets in every result before the model or anyone else sees it."""
        self._tools = {tool.name: tool for tool in tools}
        self._schemas = [_schema(tool) for tool in tools]
        self._redact = redact

    def add(self, tools: list[Tool[Any]]) -> None:
        """More tools (an MCP server's), before the first request: the schemas must not change after it."""
        for tool in tools:
            if tool.name not in self._tools:
                self._tools[tool.name] = tool
                self._schemas.append(_schema(tool))

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    @property
    def tools(self) -> list[Tool[Any]]:
        return list(self._tools.values())

    def get(self, name: str) -> Tool[Any]:
        try:
            return self._tools[name]
        except KeyError:
            known = ", ".join(self._tools)
            raise ToolError(f"there is no tool named {name!r}; the tools are: {known}") from None

    def names(self) -> frozenset[str]:
        return frozenset(self._tools)

    def schema(self, name: str) -> dict[str, Any] | None:
        """One tool's schema (None for a name that is not a tool)."""
        return next((s for s in self._schemas if s["function"]["name"] == name), None)

    def schemas(self) -> list[dict[str, Any]]:
        """Derived once: the request prefix must be byte-identical from call to call."""
        return self._schemas

    def validate(self, name: str, raw: str | dict[str, Any] | None) -> tuple[Tool[Any], ToolArgs]:
        """The tool and its validated arguments, or a ToolError saying what to fix."""
        tool = self.get(name)
        try:
            return tool, tool.check_arguments(parse_arguments(raw))
        except ValidationError as exc:
            raise ToolError(f"invalid arguments for {name}: {_describe_validation(exc)}") from None

    async def run(self, tool: Tool[Any], args: ToolArgs, ctx: ToolContext) -> ToolResult:
        """Run one validated call; every failure becomes a result the model can read, never a crash."""
        try:
            result = await tool.run(args, ctx)
        except ToolError as exc:
            result = ToolResult(output=f"Error: {exc}", ok=False)
        except Exception as exc:  # noqa: BLE001 - a tool's own bug must not end the session
            result = ToolResult(output=f"Error ({type(exc).__name__}): {exc}", ok=False)
        if self._redact is None:
            return result
        return result.model_copy(
            update={
                "output": self._redact(result.output),
                "diff": self._redact(result.diff) if result.diff else result.diff,
            }
        )
