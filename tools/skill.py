"""The skill tool: the instructions of a skill the system prompt lists, loaded when the task needs them."""

from __future__ import annotations

from pydantic import Field

from keel.agent.skills.catalog import find_skills
from keel.prompts import render
from keel.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolKind, ToolResult


class SkillArgs(ToolArgs):
    name: str = Field(
        description="the skill's name, as the list of skills in the system prompt gives it"
    )


class SkillTool(Tool[SkillArgs]):
    """Offered only when the workspace or the user has skills (agent/skills)."""

    name = "skill"
    kind = ToolKind.READ
    description = (
        "Load a skill's instructions (and the list of its other files) by its name, "
        "before doing a task the skill covers."
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
        output = render("skill_loaded", skill=skill, body=skill.body(), folder=folder, files=files)
        return ToolResult(output=output, ok=True)
