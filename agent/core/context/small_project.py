"""A small project's files, given whole to a small model with its task: it edits well what it can see, but
rarely reads before it acts (bench/small_model.py: the same model solves most tasks in one call with the files
in its prompt, few when it must find them with tools)."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from pydantic import BaseModel

from keel.agent.core.context.edit_format import edit_format
from keel.agent.core.repo_files import read_inside

MAX_PROJECT_CHARS = 12_000  # about 3,000 tokens: a fifth of a small model's 16k window
# a fence's language, as one call's prompt labels its files (bench/small_model: "```python")
FENCE_LANGUAGES = {
    ".py": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".sh": "bash",
    ".rs": "rust",
    ".go": "go",
    ".json": "json",
    ".toml": "toml",
    ".md": "markdown",
}


class ProjectFile(BaseModel):
    path: str
    text: str

    @property
    def fence_language(self) -> str:
        """The language its fenced block is labelled with ("" when keel does not know one)."""
        return FENCE_LANGUAGES.get(PurePosixPath(self.path).suffix.lower(), "")

    @property
    def whole(self) -> bool:
        """Whether a small model is asked to rewrite this file whole (else: edit_file)."""
        return edit_format(self.text) == "whole"


def small_project(
    root: Path, files: list[str], limit: int = MAX_PROJECT_CHARS
) -> list[ProjectFile]:
    """Every listed file's text, or [] when they are more than `limit` characters or one is not text (a file that
    cannot be read, or links out of the repository, is left out)."""
    found: list[ProjectFile] = []
    total = 0
    for name in files:
        data = read_inside(root, name)
        if data is None:  # unreadable, or a link out of the repository: not given
            continue
        total += len(data)
        if total > limit or b"\x00" in data:
            return []
        try:
            found.append(ProjectFile(path=name, text=data.decode("utf-8")))
        except UnicodeDecodeError:
            return []
    return found
