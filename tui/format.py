"""Short human forms of numbers and tool arguments, shared by the widgets (pure functions)."""

from __future__ import annotations

from typing import Any

from keel.prompts import plural  # noqa: F401 - the widgets reach it as fmt.plural

# The argument that best names what a tool call is about, per tool (others fall back to the first).
_MAIN_ARGUMENT = {
    "read_file": "path",
    "write_file": "path",
    "edit_file": "path",
    "search": "pattern",
    "find_files": "pattern",
    "code_map": "path",
    "run_command": "command",
    "lint": "paths",
}


def tokens(count: int | None) -> str:
    """1234 -> 1.2k; None -> ∞ (no budget)."""
    if count is None:
        return "∞"
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k".replace(".0k", "k")
    return f"{count / 1_000_000:.1f}M".replace(".0M", "M")


def cost(dollars: float | None) -> str:
    if dollars is None:
        return "$ n/a"
    if dollars < 0.01:
        return f"${dollars:.4f}"
    return f"${dollars:.2f}"


def duration(milliseconds: int) -> str:
    if milliseconds < 1000:
        return f"{milliseconds}ms"
    return f"{milliseconds / 1000:.1f}s"


def percent(part: int, whole: int) -> str:
    if whole <= 0:
        return "–"
    return f"{100 * part / whole:.0f}%"


def one_line(text: str, width: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def argument_summary(tool: str, arguments: dict[str, Any], width: int = 60) -> str:
    """The one argument worth showing in a collapsed tool panel's title."""
    if not arguments:
        return ""
    key = _MAIN_ARGUMENT.get(tool)
    if tool == "apply_patch":
        files = [
            line.split(":", 1)[1].strip()
            for line in str(arguments.get("patch", "")).splitlines()
            if line.startswith("*** ") and ":" in line and "File" in line
        ]
        return one_line(", ".join(files), width)
    value = arguments.get(key) if key else next(iter(arguments.values()))
    if value is None:
        value = next(iter(arguments.values()))
    shown = value if isinstance(value, str) else _json(value)
    return one_line(shown, width)


def argument_lines(arguments: dict[str, Any]) -> list[str]:
    """`key: value` lines; multi-line strings are kept as blocks under their key."""
    lines: list[str] = []
    for key, value in arguments.items():
        if isinstance(value, str) and "\n" in value:
            lines.append(f"{key}:")
            lines.extend("  " + line for line in value.splitlines())
        else:
            shown = value if isinstance(value, str) else _json(value)
            lines.append(f"{key}: {shown}")
    return lines


def clip_lines(text: str, limit: int) -> tuple[str, int]:
    """The first `limit` lines of text and how many were left out."""
    lines = text.splitlines()
    if len(lines) <= limit:
        return text.rstrip("\n"), 0
    return "\n".join(lines[:limit]), len(lines) - limit


def _json(value: Any) -> str:
    import json  # with the first tool call shown, not before the first frame

    return json.dumps(value, ensure_ascii=False)
