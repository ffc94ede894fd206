"""Slash commands: parsing and help text (pure)."""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path

from keel.prompts import plural


class CommandError(ValueError):
    """A command the person typed that cannot run as written; the message says what would."""


@dataclass(frozen=True)
class SlashCommand:
    name: str
    argument: str = ""


@dataclass(frozen=True)
class CommandHelp:
    usage: str
    description: str
    listed: bool = True  # an alias /help does not show


MAX_COPIES = 16  # agents one prompt can start at once; more would not fit side by side


@dataclass(frozen=True)
class FanOut:
    """`/fan N PROMPT`: N agents, each in its own worktree, all on `prompt`."""

    count: int
    prompt: str


def command_help() -> list[CommandHelp]:
    return [
        CommandHelp("/new", "start another agent (same tree or its own git worktree)"),
        CommandHelp(
            "/fan N PROMPT",
            f"start N agents (up to {MAX_COPIES}) on one prompt, each in its own git worktree, "
            "and show them side by side",
        ),
        CommandHelp(
            "/side [N …]",
            "show sessions side by side (by number; default: this fan-out group, else all)",
        ),
        CommandHelp(
            "/model [NAME]",
            "show the model, or set it for this session if it has not started, "
            "else for the agents you start next",
        ),
        CommandHelp("/compact", "summarize this session's context now"),
        CommandHelp("/budget N|off", "set this session's token budget (e.g. 200k)"),
        CommandHelp("/undo [ID]", "undo the last turn's file changes, or go back to checkpoint ID"),
        CommandHelp(
            "/sessions [N|ID]",
            "show the session list and this directory's past sessions; /sessions N (or ID) reopens one",
        ),
        CommandHelp(
            "/plan [PROMPT|off]",
            "plan mode: only the read tools run and the agent answers with a plan, which you accept "
            "(the session carries it out) or edit; with a prompt, plan it now; off leaves it (F4)",
        ),
        CommandHelp("/help", "this help"),
        CommandHelp("/quit", "quit keel (running agents are stopped); /exit too"),
        CommandHelp("/exit", "quit keel", listed=False),
    ]


def feature_help() -> list[CommandHelp]:
    """What works without a command, for /help."""
    return [
        CommandHelp(
            "subagents",
            "the model can hand a self-contained piece of work to a child session (its task tool); "
            "children show under their agent in the list, their logs in /sessions. Agents are defined in "
            ".keel/agents/*.md, ~/.config/keel/agents/*.md and Claude Code's .claude/agents/*.md; an "
            "untrusted repository's get read tools only (keel trust)",
        ),
    ]


def markdown_help(root: Path) -> list[CommandHelp]:
    """The Markdown commands of the workspace and the user (keel.agent.core.commands), as /help lists them."""
    from keel.agent.core.api import markdown_commands

    return [
        CommandHelp(f"/{c.name} {c.argument_hint}".strip(), c.description or str(c.path))
        for c in markdown_commands(root).values()
    ]


def skill_help(root: Path) -> list[CommandHelp]:
    """The skills of the workspace and the user, which the model loads when a task needs one."""
    from keel.agent.core.api import skills

    return [CommandHelp(skill.name, skill.description) for skill in skills(root)]


def command_names(prompts: Collection[str] = ()) -> list[str]:
    """keel's commands, then the Markdown commands named in `prompts` (they are sent as prompts)."""
    own = [help_.usage.split()[0] for help_ in command_help()]
    return own + [f"/{name}" for name in prompts if f"/{name}" not in own]


def parse_command(text: str, prompts: Collection[str] = ()) -> SlashCommand | None:
    """None when the text is a prompt (a Markdown command's too: the session expands it); a SlashCommand
    when it names one of keel's commands."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    head, _, argument = stripped.partition(" ")
    if head[1:] in prompts and head not in command_names():
        return None
    if head not in command_names():
        raise CommandError(
            f"unknown command {head}; the commands are {', '.join(command_names(prompts))}"
        )
    return SlashCommand(head[1:], argument.strip())


_BUDGET = re.compile(r"^(\d+(?:\.\d+)?)\s*([km]?)$", re.IGNORECASE)


def parse_budget(argument: str) -> int | None:
    """`200000`, `200k`, `1.5m` -> tokens; `off`/`none` -> no budget."""
    value = argument.strip().lower().replace(",", "").replace("_", "")
    if value in ("off", "none", "unlimited"):
        return None
    match = _BUDGET.match(value)
    if not match:
        raise CommandError(
            f"/budget needs a token count like 200000 or 200k, or `off`; got {argument!r}"
        )
    number = float(match.group(1)) * {"": 1, "k": 1_000, "m": 1_000_000}[match.group(2)]
    if number < 1:
        raise CommandError("/budget must be at least 1 token, or `off`")
    return int(number)


def parse_copies(text: str, command: str = "copies") -> int:
    """How many agents to start: a whole number from 1 to MAX_COPIES."""
    value = text.strip()
    if not value.isdecimal():
        raise CommandError(
            f"{command} needs a number of agents from 1 to {MAX_COPIES}; got {value!r}"
        )
    count = int(value)
    if not 1 <= count <= MAX_COPIES:
        raise CommandError(f"{command} starts from 1 to {MAX_COPIES} agents at once; got {count}")
    return count


def parse_fan(argument: str) -> FanOut:
    """`3 fix the failing test` -> FanOut(3, "fix the failing test")."""
    head, _, prompt = argument.strip().partition(" ")
    usage = "usage: /fan N PROMPT, e.g. /fan 3 fix the failing test"
    if not head:
        raise CommandError(f"/fan needs a number of agents and a prompt; {usage}")
    count = parse_copies(head, "/fan")
    if not prompt.strip():
        raise CommandError(f"/fan needs a prompt for the {plural(count, 'agent')}; {usage}")
    return FanOut(count, prompt.strip())


def parse_session_numbers(argument: str, sessions: int) -> list[int]:
    """`/side 1 3` -> [1, 3]: session numbers as the session list counts them (from 1)."""
    numbers: list[int] = []
    for word in argument.replace(",", " ").split():
        if not word.isdecimal() or not 1 <= int(word) <= sessions:
            raise CommandError(
                f"/side takes session numbers from 1 to {sessions} (e.g. /side 1 3); got {word!r}"
            )
        if int(word) not in numbers:
            numbers.append(int(word))
    return numbers
