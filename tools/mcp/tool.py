"""An MCP server's tool as the model sees it: `mcp__<server>__<tool>`, with the server's own schema.

This is the one kind of tool whose schema does not come from a pydantic Args model: the server
defines it, so the arguments are checked against that JSON schema (jsonschema) before the call.
"""

from __future__ import annotations

import json
import re
from functools import cached_property
from typing import Any, ClassVar

from pydantic import ConfigDict

from keel.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult
from keel.tools.exec.sandbox_policy import SandboxMode
from keel.tools.mcp.connection import McpCallFailed, McpConnection, RemoteTool

MAX_OUTPUT_CHARS = 30_000
MAX_NAME = 64  # what OpenAI-style APIs accept for a function name
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9_-]")


class McpArgs(ToolArgs):
    """Whatever the server's schema allows; `McpTool.check_arguments` has checked it."""

    model_config = ConfigDict(extra="allow")


def tool_name(server: str, tool: str) -> str:
    """`mcp__<server>__<tool>`, as Claude Code names them, cut to the 64 characters APIs accept."""
    return f"mcp__{server}__{_NOT_IN_NAME.sub('_', tool)}"[:MAX_NAME]


class McpTool(Tool[McpArgs]):
    """Calls one tool of one server; `mcp_tool` makes the subclass that names it."""

    Args: ClassVar[type[ToolArgs]] = McpArgs
    same_result_again = False  # a server's tool may answer differently each time
    remote: ClassVar[RemoteTool]

    def __init__(self, connection: McpConnection) -> None:
        self.connection = connection

    @cached_property
    def _validator(self) -> Any:
        """The server's schema compiled, or None when it is not a valid schema (the server judges then)."""
        from jsonschema.exceptions import SchemaError  # type: ignore[import-untyped]
        from jsonschema.validators import (  # type: ignore[import-untyped]
            Draft202012Validator,
            validator_for,
        )

        schema = self.parameters or {}
        validator = validator_for(schema, default=Draft202012Validator)
        try:
            validator.check_schema(schema)
        except SchemaError:
            return None
        return validator(schema)

    def check_arguments(self, arguments: dict[str, Any]) -> ToolArgs:
        """Checked against the server's schema: the model is told each problem and where it is."""
        found = [] if self._validator is None else self._validator.iter_errors(arguments)
        errors = sorted(found, key=lambda error: [str(p) for p in error.path])
        if errors:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error.path) or 'arguments'}: {error.message}"
                for error in errors[:5]
            )
            schema = json.dumps(self.parameters, separators=(",", ":"))[:1500]
            raise ToolError(
                f"invalid arguments for {self.name}: {problems}. Its arguments' schema: {schema}"
            )
        return McpArgs.model_validate(arguments)

    async def run(self, args: McpArgs, ctx: ToolContext) -> ToolResult:
        if self.kind is ToolKind.EXEC and ctx.sandbox.mode is SandboxMode.READ_ONLY:
            raise ToolError(
                f"the sandbox is read-only, and {self.name} runs outside it (its server is not "
                "confined by keel's sandbox); it can only be used with a sandbox that allows "
                "writes, or with read_only = true on the server in the config"
            )
        try:
            result = await self.connection.call(self.remote.name, args.model_dump())
        except McpCallFailed as exc:
            raise ToolError(str(exc)) from None
        text = render_result(result.content, result.structured_content)
        if result.is_error:
            return ToolResult(
                output=f"Error: {text or 'the tool failed and said nothing'}", ok=False
            )
        return ToolResult(output=text or "(the tool returned nothing)")


def mcp_tool(connection: McpConnection, remote: RemoteTool) -> McpTool:
    """The tool for one of a server's tools: a command unless the server is configured read_only."""
    read_only = connection.config.read_only
    description = remote.description.strip() or f"The {remote.name} tool of {connection.name}."
    attributes = {
        "name": tool_name(connection.name, remote.name),
        "kind": ToolKind.READ if read_only else ToolKind.EXEC,
        "description": f"{description}\n(MCP server {connection.name}.)",
        "parameters": _object_schema(remote.input_schema),
        "remote": remote,
    }
    subclass: type[McpTool] = type(f"McpTool_{connection.name}", (McpTool,), attributes)
    return subclass(connection)


def _object_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """APIs want an object schema with properties; a server may leave either out."""
    fixed = dict(schema) if isinstance(schema, dict) else {}
    fixed.setdefault("type", "object")
    fixed.setdefault("properties", {})
    return fixed


def render_result(content: list[Any], structured: Any) -> str:
    """The content blocks as text for the model; pictures and binaries are named, not inlined."""
    parts: list[str] = []
    for block in content:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind in ("image", "audio"):
            parts.append(
                f"[{kind}: {block.mime_type}, {len(block.data) * 3 // 4} bytes, not shown]"
            )
        elif kind == "resource":
            resource = block.resource
            text = getattr(resource, "text", None)
            parts.append(text if text is not None else f"[binary resource {resource.uri}]")
        elif kind == "resource_link":
            parts.append(
                f"[resource {block.uri}{': ' + block.description if block.description else ''}]"
            )
    if not parts and structured is not None:
        parts.append(json.dumps(structured, ensure_ascii=False, indent=1))
    text = "\n".join(parts)
    if len(text) > MAX_OUTPUT_CHARS:
        cut = len(text) - MAX_OUTPUT_CHARS
        text = f"{text[:MAX_OUTPUT_CHARS]}\n[… {cut:,} more characters cut]"
    return text
