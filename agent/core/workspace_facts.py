"""Facts about the workspace that go into the system prompt, gathered once so the prompt prefix stays stable."""

from __future__ import annotations

import os
import platform
from pathlib import Path

from pydantic import BaseModel

from keel.agent.core.repo_files import read_inside

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_INSTRUCTIONS_CHARS = 20_000
MAX_LISTED_FILES = 40
_SKIPPED = {".git", "node_modules", "__pycache__", ".venv", "venv", ".mypy_cache", ".pytest_cache"}


class Instructions(BaseModel):
    name: str
    text: str


class WorkspaceFacts(BaseModel):
    root: str
    git_branch: str | None
    platform: str
    top_level: list[str]
    # every file, when the project is small enough to list whole (the compact prompt shows them)
    files: list[str] = []
    test_command: str | None = None  # .keel/config.toml's, verified by `keel setup`
    test_command_runs: bool = True  # keel may run it to verify a change (not an untrusted repo's)


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


def _top_level(root: Path) -> list[str]:
    """The root's entries, folders with a slash (from the directory's own listing: no stat per entry)."""
    with os.scandir(root) as found:
        return sorted(e.name + ("/" if e.is_dir() else "") for e in found if e.name not in _SKIPPED)


def gather_facts(root: Path, max_entries: int = 60, list_files: bool = False) -> WorkspaceFacts:
    """The facts of the prompt; `list_files` also walks a small project for its files (the small-model
    profile's use), which other sessions do not pay for at start."""
    entries = _top_level(root) if root.is_dir() else []
    if len(entries) > max_entries:
        entries = entries[:max_entries] + [f"... and {len(entries) - max_entries} more"]
    return WorkspaceFacts(
        root=str(root),
        git_branch=_git_branch(root),
        platform=f"{platform.system()} {platform.machine()}",
        top_level=entries,
        files=all_files(root) if list_files and root.is_dir() else [],
    )


def all_files(root: Path, limit: int = MAX_LISTED_FILES) -> list[str]:
    """Every file under root (relative, sorted; hidden and tool folders skipped), or [] past `limit`: a small
    model that sees a small project's files does not make up paths."""
    found: list[str] = []
    for folders, (folder, subfolders, names) in enumerate(os.walk(root), 1):
        if folders > limit:
            return []
        subfolders[:] = [d for d in subfolders if d not in _SKIPPED and not d.startswith(".")]
        base = Path(folder).relative_to(root)
        found += [(base / name).as_posix() for name in names if not name.startswith(".")]
        if len(found) > limit:
            return []
    return sorted(found)


def load_instructions(root: Path) -> Instructions | None:
    """The repo's AGENTS.md, or CLAUDE.md when there is no AGENTS.md."""
    for name in INSTRUCTION_FILES:
        data = read_inside(root, name) if (root / name).is_file() else None
        if data is not None:
            text = data.decode("utf-8", errors="replace")
            if len(text) > MAX_INSTRUCTIONS_CHARS:
                text = (
                    text[:MAX_INSTRUCTIONS_CHARS]
                    + f"\n[... {name} cut at {MAX_INSTRUCTIONS_CHARS} characters]"
                )
            return Instructions(name=name, text=text.strip())
    return None
