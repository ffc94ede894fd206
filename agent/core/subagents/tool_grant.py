"""Which tools a child session gets: its definition's list (keel's names or Claude Code's), never more than
the parent session has, never `task` itself, and only read tools when an untrusted repository asks for more."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from keel.agent.core.subagents.definitions import AgentDefinition

# Claude Code's tool names and the keel tools that do their work
CLAUDE_CODE_TOOLS: dict[str, tuple[str, ...]] = {
    "read": ("read_file",),
    "grep": ("search",),
    "glob": ("find_files",),
    "ls": ("find_files",),
    "write": ("write_file",),
    "edit": ("edit_file",),
    "multiedit": ("edit_file", "apply_patch"),
    "bash": ("run_command", "job_output"),
    "bashoutput": ("job_output",),
    "killshell": ("job_output",),
    "killbash": ("job_output",),
    "webfetch": ("web_fetch",),
    "todowrite": ("todo",),
}
READ_ONLY_TOOLS = (
    "read_file",
    "search",
    "find_files",
    "code_map",
)  # a child's without a definition's list
NEVER_GRANTED = frozenset({"task", "propose_setup"})  # no child starts children of its own


@dataclass
class Grant:
    """The tools a child gets, and what was asked for but withheld (with why, for the parent's model)."""

    tools: list[str]
    withheld: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    @property
    def writes(self) -> bool:
        """Whether the child may change files or run commands."""
        return any(name not in READ_ONLY_TOOLS for name in self.tools)


def keel_names(name: str, known: frozenset[str]) -> tuple[str, ...] | None:
    """The keel tools one listed name means: a keel tool's own name, or Claude Code's (`Bash(git diff:*)` is
    `Bash`); None for a name neither knows."""
    bare = re.sub(r"\(.*\)$", "", name.strip()).strip()
    if bare in known:
        return (bare,)
    return CLAUDE_CODE_TOOLS.get(bare.lower().replace("_", ""))


def grant_tools(definition: AgentDefinition | None, available: list[str], may_widen: bool) -> Grant:
    """The child's tools, in the parent's order. No definition, or one naming no tools: the read tools.
    `may_widen`: the definition is the person's, or its repository is trusted."""
    ordered = [name for name in available if name not in NEVER_GRANTED]
    unknown: list[str] = []
    asked: set[str] = (
        set(READ_ONLY_TOOLS) if definition is None or definition.tools is None else set()
    )
    if definition is not None and definition.tools is not None:
        for name in definition.tools:
            meant = keel_names(name, frozenset(ordered) | frozenset(READ_ONLY_TOOLS))
            if meant is None:
                unknown.append(name)
            else:
                asked.update(meant)
    if definition is not None:
        for name in definition.disallowed_tools:
            asked.difference_update(keel_names(name, frozenset(ordered)) or ())
    withheld = sorted(name for name in asked if name not in READ_ONLY_TOOLS and not may_widen)
    tools = [name for name in ordered if name in asked and name not in withheld]
    unknown += sorted(asked - set(tools) - set(withheld))  # named, but not a tool of this session
    return Grant(tools=tools, withheld=withheld, unknown=unknown)
