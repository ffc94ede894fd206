"""Find the skills of a workspace and the user: `.keel/skills/NAME/SKILL.md`, `.claude/skills/NAME/SKILL.md`
and `~/.config/keel/skills/NAME/SKILL.md`; the model sees each one's name and description, and loads the
body with the `skill` tool when a task needs it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from keel.agent.core.commands.front_matter import split_front_matter
from keel.agent.core.config_files import user_config_path

MAX_DESCRIPTION = 1024  # characters, as the Agent Skills format allows


@dataclass(frozen=True)
class Skill:
    """One skill: its name and description (what the system prompt lists) and where its SKILL.md is."""

    name: str
    description: str
    path: Path

    def body(self) -> str:
        """The instructions after the front matter (read when the model asks for them)."""
        return split_front_matter(self.path.read_text(encoding="utf-8", errors="replace"))[1]


def skill_folders(root: Path) -> list[Path]:
    """Where skills come from, the first one winning a name: the repository's, Claude Code's, the user's."""
    return [
        root / ".keel" / "skills",
        root / ".claude" / "skills",
        user_config_path().parent / "skills",
    ]


def find_skills(root: Path) -> list[Skill]:
    """Every skill with a SKILL.md that has a description, by name (the folder's name when it has none)."""
    found: dict[str, Skill] = {}
    for folder in skill_folders(root):
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*/SKILL.md")):
            try:
                keys, _ = split_front_matter(path.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue
            name = keys.get("name") or path.parent.name
            description = " ".join(keys.get("description", "").split())[:MAX_DESCRIPTION]
            if description and name not in found:
                found[name] = Skill(name, description, path)
    return list(found.values())
