"""Agent definitions: markdown files whose front matter says name, description, tools and model, and whose
body is the agent's prompt. keel's `.keel/agents/`, and Claude Code's `.claude/agents/` read as they are."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from keel.agent.core.repo_files import text_within
from keel.agent.core.subagents.frontmatter import (
    FrontMatterError,
    FrontMatterValue,
    split_front_matter,
)

Origin = Literal["repository", "user"]


class AgentDefinition(BaseModel):
    """One agent a `task` call may name. `tools` None: the definition names none (keel's read tools then);
    `origin` says whether the repository or the person wrote it (a repository's widens nothing untrusted)."""

    model_config = ConfigDict(frozen=True)

    name: str
    description: str = ""
    prompt: str = ""
    tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] = ()
    model: str = ""
    isolation: Literal["", "worktree"] = ""
    max_turns: int | None = None
    path: Path
    origin: Origin


class DefinitionProblem(BaseModel):
    """A definition file that could not be read, and why (listed, so a typo does not go unnoticed)."""

    path: Path
    problem: str


def user_agent_dirs() -> list[Path]:
    """The person's own definitions: keel's, then Claude Code's."""
    config = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return [config / "keel" / "agents", Path.home() / ".claude" / "agents"]


def repo_agent_dirs(repo: Path) -> list[Path]:
    """The repository's definitions: keel's, then Claude Code's."""
    return [repo / ".keel" / "agents", repo / ".claude" / "agents"]


def _names(value: FrontMatterValue | None) -> tuple[str, ...] | None:
    """A tool list as Claude Code writes it: `Read, Grep` or a YAML list; None when not given."""
    if value is None:
        return None
    items = value if isinstance(value, list) else value.split(",")
    return tuple(item.strip() for item in items if item.strip())


def parse_definition(text: str, path: Path, origin: Origin) -> AgentDefinition:
    """One definition file; its name defaults to the file's stem. FrontMatterError or ValueError if malformed."""
    keys, body = split_front_matter(text)
    name = keys.get("name") or path.stem
    if not isinstance(name, str) or not name.strip():
        raise ValueError("`name` must be one word, such as `reviewer`")
    description = keys.get("description", "")
    model = keys.get("model", "")
    isolation = keys.get("isolation", "")
    max_turns = keys.get("maxTurns") or keys.get("max_turns")
    if isolation not in ("", "worktree"):
        raise ValueError(f"`isolation` is {isolation!r}; the only isolation is `worktree`")
    if max_turns is not None and not (isinstance(max_turns, str) and max_turns.isdigit()):
        raise ValueError(f"`maxTurns` must be a whole number, not {max_turns!r}")
    return AgentDefinition(
        name=name.strip(),
        description=description if isinstance(description, str) else " ".join(description),
        prompt=body.strip(),
        tools=_names(keys.get("tools")),
        disallowed_tools=_names(keys.get("disallowedTools") or keys.get("disallowed_tools")) or (),
        model=model.strip() if isinstance(model, str) else "",
        isolation="worktree" if isolation == "worktree" else "",
        max_turns=int(max_turns) if max_turns else None,
        path=path,
        origin=origin,
    )


def find_definitions(
    repo: Path, user_dirs: list[Path] | None = None
) -> tuple[dict[str, AgentDefinition], list[DefinitionProblem]]:
    """Every definition by name, and the files that could not be read. As in Claude Code, a repository's
    definition takes the place of the person's of the same name; keel's folder before Claude Code's."""
    found: dict[str, AgentDefinition] = {}
    problems: list[DefinitionProblem] = []
    layers: list[tuple[Path, Origin]] = [
        *((folder, "user") for folder in reversed(user_dirs or user_agent_dirs())),
        *((folder, "repository") for folder in reversed(repo_agent_dirs(repo))),
    ]
    for folder, origin in layers:  # lowest first: a later layer replaces a name
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
            try:
                # a repository's body is a prompt for the model: never read through a link out of it
                inside = repo if origin == "repository" else None
                definition = parse_definition(text_within(inside, path), path, origin)
            except (OSError, UnicodeDecodeError, FrontMatterError, ValueError) as exc:
                problems.append(DefinitionProblem(path=path, problem=str(exc)))
                continue
            found[definition.name] = definition
    return found, problems
