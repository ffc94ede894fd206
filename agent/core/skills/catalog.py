"""Find the skills of a workspace and the user: `.keel/skills/NAME/SKILL.md`, `.claude/skills/NAME/SKILL.md`
and `~/.config/keel/skills/NAME/SKILL.md`; the model sees each one's name and description, and loads the
body with the `skill` tool when a task needs it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from keel.agent.core.commands.front_matter import split_front_matter
from keel.agent.core.config_files import user_config_path
from keel.agent.core.repo_files import text_within

MAX_DESCRIPTION = 1024  # characters, as the Agent Skills format allows


@dataclass(frozen=True)
class Skill:
    """One skill: its name and description (what the system prompt lists) and where its SKILL.md is;
    `inside`: the repository its file must stay in (None for the person's own skills)."""

    name: str
    description: str
    path: Path
    inside: Path | None = None

    def body(self) -> str:
        """The instructions after the front matter (read when the model asks for them). OSError if unreadable."""
        return split_front_matter(text_within(self.inside, self.path))[1]


def skill_folders(root: Path) -> list[tuple[Path, Path | None]]:
    """Where skills come from, the first one winning a name: the repository's, Claude Code's, the user's;
    each with the root its files must stay in."""
    return [
        (root / ".keel" / "skills", root),
        (root / ".claude" / "skills", root),
        (user_config_path().parent / "skills", None),
    ]


def find_skills(root: Path) -> list[Skill]:
    """Every skill with a SKILL.md that has a description, by name (the folder's name when it has none)."""
    found: dict[str, Skill] = {}
    for folder, inside in skill_folders(root):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*/SKILL.md")):
            try:
                keys, _ = split_front_matter(text_within(inside, path))
            except OSError:
                continue
            name = keys.get("name") or path.parent.name
            description = " ".join(keys.get("description", "").split())[:MAX_DESCRIPTION]
            if description and name not in found:
                found[name] = Skill(name, description, path, inside)
    return list(found.values())
