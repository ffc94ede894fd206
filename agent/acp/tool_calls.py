"""keel's tool calls as ACP shows them: a kind, a title, the files they touch, and edits as diffs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolKind,
)

ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

_KINDS: dict[str, ToolKind] = {
    "read_file": "read",
    "write_file": "edit",
    "edit_file": "edit",
    "apply_patch": "edit",
    "search": "search",
    "find_files": "search",
    "code_map": "search",
    "lint": "execute",
    "run_command": "execute",
    "job_output": "execute",
    "web_fetch": "fetch",
}
MAX_OUTPUT_CHARS = 20_000  # a tool's output shown in the editor; the model saw it all
_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def tool_kind(name: str) -> ToolKind:
    """ACP's kind of a keel tool (an MCP server's or an unknown one is `other`)."""
    return _KINDS.get(name, "other")


def tool_title(name: str, arguments: dict[str, Any]) -> str:
    """A one-line title: the command run, the file read or edited, the pattern searched."""
    if name == "run_command" and isinstance(arguments.get("command"), str):
        return str(arguments["command"])
    if name == "apply_patch":
        return "Apply a patch"
    for key in ("path", "pattern", "query", "job_id"):
        value = arguments.get(key)
        if isinstance(value, str | int) and str(value):
            verb = {"read_file": "Read", "write_file": "Write", "edit_file": "Edit"}.get(name, name)
            return f"{verb} {value}"
    return name


def tool_locations(root: Path, name: str, arguments: dict[str, Any]) -> list[ToolCallLocation]:
    """The file a call reads or edits, as an absolute path the editor can open."""
    path = arguments.get("path")
    if tool_kind(name) not in ("read", "edit") or not isinstance(path, str) or not path:
        return []
    line = arguments.get("offset") if name == "read_file" else None
    return [ToolCallLocation(path=str(root / path), line=line if isinstance(line, int) else None)]


def raw_input(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments as JSON values (a malformed call's are shown as keel logged them)."""
    return dict(json.loads(json.dumps(arguments, default=str)))


def text_content(text: str) -> ContentToolCallContent:
    if len(text) > MAX_OUTPUT_CHARS:
        text = text[:MAX_OUTPUT_CHARS] + f"\n… ({len(text) - MAX_OUTPUT_CHARS:,} more characters)"
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


def diff_contents(root: Path, diff: str) -> list[FileEditToolCallContent]:
    """Each hunk of keel's unified diff as an ACP diff: the old and new lines of one file's hunk."""
    contents: list[FileEditToolCallContent] = []
    path: str | None = None
    lines = diff.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if line.startswith("+++ "):
            target = line[4:].rstrip("\n")
            path = None if target == "/dev/null" else target.removeprefix("b/")
            continue
        hunk = _HUNK.match(line)
        if hunk is None or path is None:
            continue
        old_left, new_left = int(hunk[1] or 1), int(hunk[2] or 1)
        old: list[str] = []
        new: list[str] = []
        while (old_left > 0 or new_left > 0) and index < len(lines):
            body = lines[index]
            index += 1
            if body.startswith("\\"):  # "\ No newline at end of file"
                continue
            if body[:1] != "+":
                old.append(body[1:])
                old_left -= 1
            if body[:1] != "-":
                new.append(body[1:])
                new_left -= 1
        contents.append(
            FileEditToolCallContent(
                type="diff",
                path=str(root / path),
                old_text="".join(old) if old else None,
                new_text="".join(new),
            )
        )
    return contents
