"""A tool call as a hook sees it: keel's names and arguments, or Claude Code's for scripts written for it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

# keel's tool -> Claude Code's tool of the same job (a script's matcher and tool_name use these)
CLAUDE_NAMES = {
    "run_command": "Bash",
    "read_file": "Read",
    "write_file": "Write",
    "edit_file": "Edit",
    "apply_patch": "Edit",
    "search": "Grep",
    "find_files": "Glob",
    "web_fetch": "WebFetch",
    "todo": "TodoWrite",
    "task": "Task",
}


def tool_names(name: str) -> list[str]:
    """The names a matcher may use for keel's tool `name`: keel's own, then Claude Code's."""
    return [name, CLAUDE_NAMES[name]] if name in CLAUDE_NAMES else [name]


def claude_tool_input(name: str, arguments: dict[str, Any], root: Path) -> dict[str, Any]:
    """The arguments as Claude Code names them: an absolute `file_path`, Bash's `run_in_background` and
    millisecond `timeout`; keys without a counterpart are kept as they are."""
    shown = dict(arguments)
    if "path" in shown and name in ("read_file", "write_file", "edit_file"):
        shown["file_path"] = str(root / str(shown.pop("path")))
    if name == "run_command":
        if "timeout" in shown:
            shown["timeout"] = int(shown["timeout"]) * 1000
        if "background" in shown:
            shown["run_in_background"] = shown.pop("background")
    return shown


def tool_response(name: str, arguments: dict[str, Any], output: str, ok: bool) -> dict[str, Any]:
    """What a PostToolUse hook reads as `tool_response`: the output and success, with Claude Code's keys for
    a command (stdout) and a file (filePath) as well."""
    response: dict[str, Any] = {"output": output, "success": ok}
    if name == "run_command":
        response |= {"stdout": output, "stderr": "", "interrupted": False}
    if "path" in arguments:
        response["filePath"] = arguments["path"]
    return response
