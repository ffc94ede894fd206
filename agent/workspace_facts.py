"""Facts about the workspace that go into the system prompt, gathered once so the prompt prefix stays stable."""

from __future__ import annotations

import platform
from pathlib import Path

from pydantic import BaseModel

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTIONS_CHARS = 20_000
_SKIPPED = {".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache"}


class Instructions(BaseModel):
    name: str
    text: str


class WorkspaceFacts(BaseModel):
    root: str
    git_branch: str | None
    platform: str
    top_level: list[str]


def git_dir_of(root: Path) -> Path | None:
    """The git directory of the repository holding `root` (a linked worktree's own one, through its
    `.git` file), found by looking at files only; None outside a repository."""
    for folder in (root, *root.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            try:
                text = dot_git.read_text(errors="replace").strip()
            except OSError:
                return None
            if not text.startswith("gitdir:"):
                return None
            target = Path(text.removeprefix("gitdir:").strip())
            return target if target.is_absolute() else (folder / target).resolve()
    return None


def _git_branch(root: Path) -> str | None:
    """The checked-out branch ("HEAD" when detached), read from git's HEAD file: no process per session."""
    git_dir = git_dir_of(root)
    try:
        head = (git_dir / "HEAD").read_text(errors="replace").strip() if git_dir else ""
    except OSError:
        return None
    if not head:
        return None
    return (
        head.removeprefix("ref: ").removeprefix("refs/heads/")
        if head.startswith("ref: ")
        else "HEAD"
    )


def gather_facts(root: Path, max_entries: int = 60) -> WorkspaceFacts:
    entries = (
        sorted(
            p.name + ("/" if p.is_dir() else "") for p in root.iterdir() if p.name not in _SKIPPED
        )
        if root.is_dir()
        else []
    )
    if len(entries) > max_entries:
        entries = entries[:max_entries] + [f"... and {len(entries) - max_entries} more"]
    return WorkspaceFacts(
        root=str(root),
        git_branch=_git_branch(root),
        platform=f"{platform.system()} {platform.machine()}",
        top_level=entries,
    )


def load_instructions(root: Path) -> Instructions | None:
    """The repo's AGENTS.md, or CLAUDE.md when there is no AGENTS.md."""
    for name in INSTRUCTION_FILES:
        path = root / name
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace")
            if len(text) > MAX_INSTRUCTIONS_CHARS:
                text = (
                    text[:MAX_INSTRUCTIONS_CHARS]
                    + f"\n[... {name} cut at {MAX_INSTRUCTIONS_CHARS} characters]"
                )
            return Instructions(name=name, text=text.strip())
    return None
