"""The skill tool: the instructions of a skill the system prompt lists, loaded when the task needs them."""

from __future__ import annotations

from pydantic import Field

from keel.agent.core.repo_files import text_within
from keel.agent.core.skills.catalog import Skill, find_skills
from keel.prompts import render
from keel.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult


class SkillArgs(ToolArgs):
    name: str = Field(
        description="the skill's name, as the list of skills in the system prompt gives it"
    )
    file: str | None = Field(
        None, description="another file of the skill (as its instructions name it), instead of them"
    )


class SkillTool(Tool[SkillArgs]):
    """Offered only when the workspace or the user has skills (agent/core/skills)."""

    name = "skill"
    kind = ToolKind.READ
    description = (
        "Load a skill's instructions (and the list of its other files) by its name, "
        "before doing a task the skill covers; with `file`, one of those files."
    )
    Args = SkillArgs

    async def run(self, args: SkillArgs, ctx: ToolContext) -> ToolResult:
        skills = find_skills(ctx.root)
        skill = next((s for s in skills if s.name == args.name), None)
        if skill is None:
            names = ", ".join(s.name for s in skills) or "none"
            raise ToolError(f"there is no skill named {args.name!r}; the skills are: {names}")
        folder = skill.path.parent
        files = sorted(
            str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and p != skill.path
        )
        try:
            if args.file is not None:
                return ToolResult(output=_skill_file(skill, args.file, files), ok=True)
            body = skill.body()
        except OSError as exc:
            raise ToolError(f"the skill {skill.name!r} cannot be read: {exc}") from exc
        output = render("skill_loaded", skill=skill, body=body, folder=folder, files=files)
        return ToolResult(output=output, ok=True)


def _skill_file(skill: Skill, name: str, files: list[str]) -> str:
    """One file of a skill's folder (a user's skill lies outside the workspace, where read_file does not go;
    a repository's stays inside the repository)."""
    folder = skill.path.parent
    path = (folder / name).resolve()
    if not path.is_relative_to(folder.resolve()) or not path.is_file():
        listed = ", ".join(files) or "none"
        raise ToolError(f"the skill has no file {name!r}; its files are: {listed}")
    return text_within(skill.inside, path)
