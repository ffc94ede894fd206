"""How hooks are configured: keel's `[[hooks.EVENT]]` tables and Claude Code's settings.json "hooks", one model."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

HookEvent = Literal["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"]
HOOK_EVENTS: tuple[HookEvent, ...] = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PostToolUse",
    "Stop",
)
DEFAULT_TIMEOUT = 60  # seconds, as Claude Code's


class HookCommand(BaseModel):
    """One command of a group, as Claude Code writes it: `{"type": "command", "command": ..., "timeout": ...}`."""

    model_config = ConfigDict(
        extra="ignore"
    )  # Claude Code's other keys (e.g. "if") are not keel's to refuse

    type: Literal["command"] = "command"
    command: str
    timeout: int | None = Field(default=None, gt=0)


def _regex(matcher: str) -> str:
    try:
        re.compile(matcher)
    except re.error as exc:
        raise ValueError(f"the matcher {matcher!r} is not a regular expression: {exc}") from None
    return matcher


class HookGroup(BaseModel):
    """Commands run at one event; for tool events only when `matcher` (a regex on the tool's name) matches.

    keel's short form names one `command`; Claude Code's form lists them in `hooks`. `tool_names = "claude"`
    hands the commands Claude Code's tool names and arguments (Bash, Read, Edit, file_path…), as a script
    written for Claude Code expects; `.claude/settings.json` hooks always get those.
    """

    model_config = ConfigDict(extra="forbid")

    matcher: Annotated[str, AfterValidator(_regex)] = ""
    command: str | None = None
    timeout: int = Field(
        default=DEFAULT_TIMEOUT, gt=0, description="seconds before the command is stopped"
    )
    hooks: list[HookCommand] = []
    tool_names: Literal["keel", "claude"] = "keel"

    def commands(self) -> list[HookCommand]:
        """Every command of the group, each with its timeout."""
        own = [HookCommand(command=self.command)] if self.command else []
        return [
            c.model_copy(update={"timeout": c.timeout or self.timeout}) for c in [*own, *self.hooks]
        ]

    def matches(self, names: list[str]) -> bool:
        """Whether the group applies to a tool called by any of `names` ("" and "*" match every tool)."""
        if self.matcher in ("", "*"):
            return True
        return any(re.fullmatch(self.matcher, name) for name in names)


HooksTable = dict[HookEvent, list[HookGroup]]


def claude_settings_files(root: Path) -> list[Path]:
    """A repository's Claude Code settings files that exist (the shared one, then the local one)."""
    folder = root / ".claude"
    return [p for p in (folder / "settings.json", folder / "settings.local.json") if p.is_file()]


def claude_hooks(path: Path) -> dict[str, list[dict[str, Any]]]:
    """The "hooks" of a Claude Code settings file as keel config tables (their events only, Claude's names)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        return {}
    tables: dict[str, list[dict[str, Any]]] = {}
    for event, groups in hooks.items():
        if event in HOOK_EVENTS and isinstance(groups, list):
            tables[event] = [
                {**group, "hooks": _commands(group.get("hooks")), "tool_names": "claude"}
                for group in groups
                if isinstance(group, dict)
            ]
    return tables


def _commands(hooks: object) -> list[dict[str, Any]]:
    """A group's command hooks; Claude Code's other kinds (prompt, http, agent) keel does not run."""
    if not isinstance(hooks, list):
        return []
    return [
        h
        for h in hooks
        if isinstance(h, dict) and h.get("type", "command") == "command" and h.get("command")
    ]


def joined(below: dict[str, Any] | None, over: dict[str, Any] | None) -> dict[str, Any]:
    """Two layers' hooks tables together: every layer's commands run (Claude Code merges them the same way)."""
    merged: dict[str, Any] = {key: list(value) for key, value in (below or {}).items()}
    for key, value in (over or {}).items():
        merged[key] = [*merged.get(key, []), *value]
    return merged
