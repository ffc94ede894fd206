"""The system prompt: rendered once per tool protocol from prompts/, so the request prefix never changes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from keel.agent.core.context.edit_format import WHOLE_FILE_MAX_LINES
from keel.agent.core.model.client import ToolProtocolName
from keel.agent.core.model.local.compact_tools import compact_tool_schemas
from keel.agent.core.skills.catalog import Skill
from keel.agent.core.workspace_facts import Instructions, WorkspaceFacts
from keel.prompts import render
from keel.tools.registry import ToolRegistry


@dataclass(frozen=True)
class PromptStyle:
    """How a kind of model is spoken to (its strategy's choice, agent/core/strategies/): the system prompt's
    template, whether tool schemas are cut short, whether the prompt lists the project's files, and whether the
    status line is sent when it carries no note."""

    template: str = "system"
    short_schemas: bool = False
    lists_files: bool = False
    bare_status_line: bool = True


@dataclass
class SystemPrompt:
    """Renders and caches the system prompt for each protocol the session uses."""

    facts: WorkspaceFacts
    instructions: Instructions | None
    registry: ToolRegistry
    style: PromptStyle = field(default_factory=PromptStyle)
    skills: list[Skill] = field(
        default_factory=list
    )  # their names and descriptions (agent/core/skills)
    _rendered: dict[str, str] = field(default_factory=dict)
    _schemas: list[dict[str, Any]] | None = None

    def text(self, protocol: ToolProtocolName, template: str | None = None) -> str:
        """The prompt in the kind's template, or in `template` when a strategy chose another for a call."""
        key = f"{protocol}:{template or self.style.template}"
        if key not in self._rendered:
            self._rendered[key] = render(
                template or self.style.template,
                workspace=self.facts,
                instructions=self.instructions,
                tool_protocol=protocol,
                text_tools=self._text_tools() if protocol == "text" else "",
                whole_file_lines=WHOLE_FILE_MAX_LINES,
                skills=self.skills,
            )
        return self._rendered[key]

    def tool_schemas(self) -> list[dict[str, Any]]:
        """The schemas the model is offered: a small model's say less (keel.agent.core.model.local.compact_tools)."""
        if self._schemas is None:
            full = self.registry.schemas()
            self._schemas = compact_tool_schemas(full) if self.style.short_schemas else full
        return self._schemas

    def _text_tools(self) -> str:
        tools = [
            {
                "name": schema["function"]["name"],
                "description": schema["function"]["description"],
                "parameters": json.dumps(schema["function"]["parameters"], separators=(",", ":")),
            }
            for schema in self.tool_schemas()
        ]
        return render("text_tools", tools=tools)
